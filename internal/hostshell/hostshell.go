// Package hostshell picks the system shell that hooks run through: sh on Unix; on
// Windows Git Bash when Git for Windows is installed (so POSIX hook commands work
// as written), else PowerShell, else cmd.exe. The choice is plain code over an Env,
// so the Windows rules are tested on any system.
package hostshell

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Kind names a shell family; hook commands are written in its language.
type Kind string

const (
	Sh         Kind = "sh"         // POSIX sh (Unix)
	GitBash    Kind = "git-bash"   // bash from Git for Windows
	PowerShell Kind = "powershell" // pwsh (7+) or Windows PowerShell 5.1
	Cmd        Kind = "cmd"        // cmd.exe
)

// Shell is a shell found on the host.
type Shell struct {
	Kind Kind
	Path string
}

// Argv runs command in the shell.
func (s Shell) Argv(command string) []string {
	switch s.Kind {
	case PowerShell:
		return []string{s.Path, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", command}
	case Cmd:
		return []string{s.Path, "/d", "/s", "/c", command}
	}
	return []string{s.Path, "-c", command}
}

// Env is what Find looks at.
type Env struct {
	GOOS     string
	LookPath func(string) (string, error)
	Exists   func(string) bool
	Getenv   func(string) string
}

// Host finds the shell on this system.
func Host() Shell {
	return Find(Env{GOOS: runtime.GOOS, LookPath: exec.LookPath, Getenv: os.Getenv, Exists: func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && !fi.IsDir()
	}})
}

// Find picks the shell for e.
func Find(e Env) Shell {
	if e.GOOS != "windows" {
		return Shell{Kind: Sh, Path: "sh"}
	}
	if b := gitBash(e); b != "" {
		return Shell{Kind: GitBash, Path: b}
	}
	for _, name := range []string{"pwsh", "powershell"} {
		if p, err := e.LookPath(name); err == nil {
			return Shell{Kind: PowerShell, Path: p}
		}
	}
	if root := e.Getenv("SystemRoot"); root != "" {
		if p := root + `\System32\WindowsPowerShell\v1.0\powershell.exe`; e.Exists(p) {
			return Shell{Kind: PowerShell, Path: p}
		}
	}
	if p := e.Getenv("ComSpec"); p != "" && e.Exists(p) {
		return Shell{Kind: Cmd, Path: p}
	}
	return Shell{Kind: Cmd, Path: "cmd.exe"}
}

// gitBash finds Git for Windows' bash.exe: next to the git on PATH, then in the
// usual install locations. A bash.exe merely on PATH is not taken: on Windows that
// is often System32\bash.exe, which runs the command inside WSL's Linux instead.
func gitBash(e Env) string {
	var roots []string
	if g, err := e.LookPath("git"); err == nil {
		d := winDir(g) // ...\Git\cmd or ...\Git\bin or ...\Git\mingw64\bin
		switch strings.ToLower(winBase(d)) {
		case "cmd":
			roots = append(roots, winDir(d))
		case "bin":
			p := winDir(d)
			if strings.EqualFold(winBase(p), "mingw64") || strings.EqualFold(winBase(p), "usr") {
				p = winDir(p)
			}
			roots = append(roots, p)
		}
	}
	for _, v := range []string{"ProgramFiles", "ProgramW6432", "ProgramFiles(x86)"} {
		if d := e.Getenv(v); d != "" {
			roots = append(roots, d+`\Git`)
		}
	}
	if d := e.Getenv("LOCALAPPDATA"); d != "" {
		roots = append(roots, d+`\Programs\Git`)
	}
	for _, r := range roots {
		if p := r + `\bin\bash.exe`; e.Exists(p) {
			return p
		}
	}
	return ""
}

func winDir(p string) string {
	if i := strings.LastIndexAny(p, `\/`); i > 0 {
		return p[:i]
	}
	return p
}

func winBase(p string) string { return p[strings.LastIndexAny(p, `\/`)+1:] }
