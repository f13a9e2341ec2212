package hostshell

import (
	"errors"
	"reflect"
	"testing"
)

func fakeEnv(goos string, onPath map[string]string, files []string, vars map[string]string) Env {
	exists := map[string]bool{}
	for _, f := range files {
		exists[f] = true
	}
	return Env{
		GOOS: goos,
		LookPath: func(n string) (string, error) {
			if p, ok := onPath[n]; ok {
				return p, nil
			}
			return "", errors.New("not found")
		},
		Exists: func(p string) bool { return exists[p] },
		Getenv: func(k string) string { return vars[k] },
	}
}

func TestFind(t *testing.T) {
	winVars := map[string]string{"ProgramFiles": `C:\Program Files`, "SystemRoot": `C:\Windows`, "ComSpec": `C:\Windows\System32\cmd.exe`, "LOCALAPPDATA": `C:\Users\me\AppData\Local`}
	for _, c := range []struct {
		name string
		env  Env
		want Shell
	}{
		{"unix", fakeEnv("linux", nil, nil, nil), Shell{Sh, "sh"}},
		{"macOS", fakeEnv("darwin", map[string]string{"bash": "/bin/bash"}, nil, nil), Shell{Sh, "sh"}},
		{"Git Bash next to git on PATH", fakeEnv("windows", map[string]string{"git": `D:\Tools\Git\cmd\git.exe`, "pwsh": `C:\pwsh\pwsh.exe`}, []string{`D:\Tools\Git\bin\bash.exe`}, winVars), Shell{GitBash, `D:\Tools\Git\bin\bash.exe`}},
		{"Git Bash from mingw64 git", fakeEnv("windows", map[string]string{"git": `D:\Git\mingw64\bin\git.exe`}, []string{`D:\Git\bin\bash.exe`}, winVars), Shell{GitBash, `D:\Git\bin\bash.exe`}},
		{"Git Bash in Program Files", fakeEnv("windows", nil, []string{`C:\Program Files\Git\bin\bash.exe`}, winVars), Shell{GitBash, `C:\Program Files\Git\bin\bash.exe`}},
		{"Git Bash per user", fakeEnv("windows", nil, []string{`C:\Users\me\AppData\Local\Programs\Git\bin\bash.exe`}, winVars), Shell{GitBash, `C:\Users\me\AppData\Local\Programs\Git\bin\bash.exe`}},
		{"WSL bash on PATH is not Git Bash", fakeEnv("windows", map[string]string{"bash": `C:\Windows\System32\bash.exe`, "pwsh": `C:\pwsh\pwsh.exe`}, nil, winVars), Shell{PowerShell, `C:\pwsh\pwsh.exe`}},
		{"Windows PowerShell", fakeEnv("windows", map[string]string{"powershell": `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`}, nil, winVars), Shell{PowerShell, `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`}},
		{"PowerShell off PATH", fakeEnv("windows", nil, []string{`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`}, winVars), Shell{PowerShell, `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`}},
		{"cmd as the last resort", fakeEnv("windows", nil, []string{`C:\Windows\System32\cmd.exe`}, winVars), Shell{Cmd, `C:\Windows\System32\cmd.exe`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Find(c.env); got != c.want {
				t.Errorf("Find = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestArgv(t *testing.T) {
	cmd := `echo "a b" && exit 2`
	for _, c := range []struct {
		s    Shell
		want []string
	}{
		{Shell{Sh, "sh"}, []string{"sh", "-c", cmd}},
		{Shell{GitBash, `C:\Git\bin\bash.exe`}, []string{`C:\Git\bin\bash.exe`, "-c", cmd}},
		{Shell{PowerShell, "pwsh"}, []string{"pwsh", "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", cmd}},
		{Shell{Cmd, "cmd.exe"}, []string{"cmd.exe", "/d", "/s", "/c", cmd}},
	} {
		if got := c.s.Argv(cmd); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Argv = %q, want %q", c.s.Kind, got, c.want)
		}
	}
}
