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

// Request asks the server to start one command.
type Request struct {
	ID   int      `json:"id"`
	Path string   `json:"path"`
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
}

// Reply reports a start (Pid) and later the end (Done) of a request's process.
type Reply struct {
	ID     int    `json:"id"`
	Pid    int    `json:"pid,omitempty"`
	Done   bool   `json:"done,omitempty"`
	Code   int    `json:"code"`
	Signal int    `json:"signal,omitempty"`
	Err    string `json:"err,omitempty"`
}

const maxMsg = 1 << 20

// serve handles requests on sock until it is closed (the parent went away).
func serve(sock *os.File, stderr io.Writer) int {
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
		if err := json.Unmarshal(buf[:n], &req); err != nil || len(files) != 3 || len(req.Args) == 0 {
			for _, f := range files {
				f.Close()
			}
			send(Reply{ID: req.ID, Done: true, Code: 126, Err: fmt.Sprintf("bad request (%d descriptors): %v", len(files), err)})
			continue
		}
		cmd := exec.Command(req.Path)
		cmd.Args, cmd.Dir, cmd.Env = req.Args, req.Dir, req.Env
		cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[1], files[2]
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
		send(Reply{ID: req.ID, Pid: cmd.Process.Pid})
		go func(id int) {
			err := cmd.Wait()
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
