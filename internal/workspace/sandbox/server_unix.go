//go:build unix

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// The exec server: one confined helper per workspace that starts many commands, so
// a shell call pays for the helper's start once rather than per simple command.
// Requests and replies are JSON datagrams on a SOCK_SEQPACKET socket; a request
// carries the command's stdin, stdout and stderr as SCM_RIGHTS descriptors.

// ServeFlag as the first helper argument selects the server mode (socket on fd 3).
const ServeFlag = "--serve"

// Request asks the server to start one command, or (Kill > 0) to kill the processes
// of the request with that ID.
type Request struct {
	ID   int      `json:"id"`
	Kill int      `json:"kill,omitempty"`
	Path string   `json:"path"`
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
}

// Reply reports a start (Pid) and later the end (Done) of a request's process. The
// server's first message (ID 0) is Hello: what it put in force.
type Reply struct {
	Hello  *Report `json:"hello,omitempty"`
	ID     int     `json:"id"`
	Pid    int     `json:"pid,omitempty"`
	Done   bool    `json:"done,omitempty"`
	Code   int     `json:"code"`
	Signal int     `json:"signal,omitempty"`
	Err    string  `json:"err,omitempty"`
}

const maxMsg = 1 << 20

// initScript is the init of a command's own PID namespace: it runs the command as a
// child (with ordinary signal semantics) and exits with its status; the kernel then
// kills whatever else is left in the namespace.
const initScript = `"$@"; exit $?`

// serve handles requests on sock until it is closed (the parent went away). With ns,
// the server is PID 1 of the sandbox's PID namespace and each command gets a nested
// PID namespace of its own.
func serve(sock *os.File, stderr io.Writer, ns bool, rep Report) int {
	// The loop uses the raw descriptor: keep the File (and so the fd) alive, or its
	// finalizer closes the socket under us.
	defer runtime.KeepAlive(sock)
	fd := int(sock.Fd())
	var wmu sync.Mutex
	send := func(r Reply) {
		b, _ := json.Marshal(r)
		wmu.Lock()
		defer wmu.Unlock()
		_ = syscall.Sendmsg(fd, b, nil, nil, 0)
	}
	shell := ""
	if ns {
		if _, err := os.Stat("/bin/sh"); err == nil {
			shell = "/bin/sh"
		}
	}
	send(Reply{Hello: &rep})
	var pmu sync.Mutex
	procs := map[int]int{} // request ID -> pid (in this namespace)
	buf := make([]byte, maxMsg)
	oob := make([]byte, syscall.CmsgSpace(3*4))
	for {
		n, oobn, _, _, err := syscall.Recvmsg(fd, buf, oob, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return 0
		}
		files := receivedFiles(oob[:oobn])
		var req Request
		if err := json.Unmarshal(buf[:n], &req); err == nil && req.Kill > 0 {
			for _, f := range files {
				f.Close()
			}
			pmu.Lock()
			pid := procs[req.Kill]
			pmu.Unlock()
			if pid > 0 {
				// SIGKILL: the init of a PID namespace ignores what it has no handler for,
				// and its death kills the namespace.
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			continue
		}
		if err != nil || len(files) != 3 || len(req.Args) == 0 {
			for _, f := range files {
				f.Close()
			}
			send(Reply{ID: req.ID, Done: true, Code: 126, Err: fmt.Sprintf("bad request (%d descriptors): %v", len(files), err)})
			continue
		}
		cmd := exec.Command(req.Path)
		cmd.Args, cmd.Dir, cmd.Env = req.Args, req.Dir, req.Env
		if shell != "" {
			// argv[0] becomes the resolved path: sh must not look the name up itself
			// (it would find its own builtins).
			cmd = exec.Command(shell, append([]string{"-c", initScript, "sh", req.Path}, req.Args[1:]...)...)
			cmd.Dir, cmd.Env = req.Dir, req.Env
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[1], files[2]
		cmd.SysProcAttr = commandAttr(shell != "")
		err = cmd.Start()
		for _, f := range files {
			f.Close() // the child has its own copies
		}
		if err != nil {
			code := 126
			if errors.Is(err, os.ErrNotExist) {
				code = 127
			}
			send(Reply{ID: req.ID, Done: true, Code: code, Err: err.Error()})
			continue
		}
		pmu.Lock()
		procs[req.ID] = cmd.Process.Pid
		pmu.Unlock()
		send(Reply{ID: req.ID, Pid: cmd.Process.Pid})
		go func(id int) {
			err := cmd.Wait()
			pmu.Lock()
			delete(procs, id)
			pmu.Unlock()
			// Without a PID namespace of its own, what the command left in its process
			// group dies with it.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			r := Reply{ID: id, Done: true}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				r.Code = ee.ExitCode()
				if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
					r.Signal = int(st.Signal())
				}
			} else if err != nil {
				r.Code, r.Err = 126, err.Error()
			}
			send(r)
		}(req.ID)
	}
}

func receivedFiles(oob []byte) []*os.File {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []*os.File
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			syscall.CloseOnExec(fd)
			out = append(out, os.NewFile(uintptr(fd), "fd"))
		}
	}
	return out
}
