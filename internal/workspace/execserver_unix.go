//go:build unix

package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/interp"

	"github.com/lovia-dev/lovia/internal/workspace/sandbox"
)

// execServer is the client side of the sandbox exec server: one confined helper per
// workspace that starts commands, so only the first command pays for its start.
type execServer struct {
	sock *os.File
	cmd  *exec.Cmd
	errb *strings.Builder

	wmu   sync.Mutex
	mu    sync.Mutex
	next  int
	waits map[int]chan sandbox.Reply
	dead  bool
}

var errServerGone = errors.New("sandbox exec server exited")

func startExecServer(helper []string, o sandbox.Options) (*execServer, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	parent := os.NewFile(uintptr(fds[0]), "sandbox-parent")
	child := os.NewFile(uintptr(fds[1]), "sandbox-child")
	defer child.Close()
	s := &execServer{sock: parent, errb: &strings.Builder{}, waits: map[int]chan sandbox.Reply{}}
	s.cmd = exec.Command(helper[0], append(append([]string(nil), helper[1:]...), sandbox.ServerArgs(o)...)...)
	s.cmd.ExtraFiles = []*os.File{child}
	s.cmd.Stderr = &lockedWriter{w: s.errb}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		parent.Close()
		return nil, err
	}
	go s.read()
	return s, nil
}

func (s *execServer) read() {
	defer runtime.KeepAlive(s.sock)
	fd := int(s.sock.Fd())
	buf := make([]byte, 64<<10)
	for {
		n, _, _, _, err := syscall.Recvmsg(fd, buf, nil, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		var r sandbox.Reply
		if json.Unmarshal(buf[:n], &r) != nil {
			continue
		}
		s.mu.Lock()
		ch := s.waits[r.ID]
		if r.Done {
			delete(s.waits, r.ID)
		}
		s.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	s.mu.Lock()
	s.dead = true
	for id, ch := range s.waits {
		close(ch)
		delete(s.waits, id)
	}
	s.mu.Unlock()
	_ = s.cmd.Wait()
}

func (s *execServer) alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.dead
}

// start sends one command with its stdio; the channel yields the start reply (Pid,
// or Done when it could not start) and then the exit.
func (s *execServer) start(req sandbox.Request, stdio [3]*os.File) (<-chan sandbox.Reply, error) {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return nil, errServerGone
	}
	s.next++
	req.ID = s.next
	ch := make(chan sandbox.Reply, 2)
	s.waits[req.ID] = ch
	s.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	rights := syscall.UnixRights(int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd()))
	s.wmu.Lock()
	err = syscall.Sendmsg(int(s.sock.Fd()), b, rights, nil, 0)
	s.wmu.Unlock()
	if err != nil {
		s.mu.Lock()
		delete(s.waits, req.ID)
		s.mu.Unlock()
		return nil, fmt.Errorf("sending to the sandbox exec server: %w", err)
	}
	return ch, nil
}

func (s *execServer) close() {
	s.sock.Close()
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// server returns the executor's exec server, starting it on first use; nil when it
// cannot run (the per-command helper is used then).
func (e *SandboxExecutor) server() *execServer {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.srv != nil && e.srv.alive() {
		return e.srv
	}
	if e.srvFailed {
		return nil
	}
	rw := append(append([]string(nil), e.Writable...), e.Caches...)
	srv, err := startExecServer(e.Helper, sandbox.Options{RW: rw, RO: e.Readable, Required: e.Required})
	if err != nil {
		e.srvFailed = true
		return nil
	}
	e.srv = srv
	return srv
}

// Close stops the exec server.
func (e *SandboxExecutor) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.srv != nil {
		e.srv.close()
		e.srv = nil
	}
}

// readerFile gives a command's stdin as a file: the file itself, /dev/null, or a pipe
// fed from r. cleanup closes what was opened for the child.
func readerFile(r io.Reader) (f *os.File, childEnd func(), err error) {
	switch v := r.(type) {
	case *os.File:
		return v, func() {}, nil
	case nil:
		f, err := os.Open(os.DevNull)
		if err != nil {
			return nil, nil, err
		}
		return f, func() { f.Close() }, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	go func() {
		_, _ = io.Copy(pw, r)
		pw.Close()
	}()
	return pr, func() { pr.Close() }, nil
}

// writerFile gives stdout/stderr as a file: the file itself or a pipe copied into w.
// wait waits (up to a grace period after the process exits) for the copy to finish.
func writerFile(w io.Writer) (f *os.File, childEnd func(), wait func(), err error) {
	if v, ok := w.(*os.File); ok {
		return v, func() {}, func() {}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(w, pr)
		close(done)
	}()
	wait = func() {
		// A background grandchild may keep the pipe open: like exec.Cmd's WaitDelay,
		// stop copying after a grace period.
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			pr.Close()
			<-done
		}
		pr.Close()
	}
	return pw, func() { pw.Close() }, wait, nil
}

// runViaServer runs one command through the exec server.
func (r *shellRun) runViaServer(ctx context.Context, srv *execServer, hc interp.HandlerContext, path string, args, env []string) (handled bool, err error) {
	in, inClose, err := readerFile(hc.Stdin)
	if err != nil {
		return true, err
	}
	out, outClose, outWait, err := writerFile(hc.Stdout)
	if err != nil {
		inClose()
		return true, err
	}
	errf, errClose, errWait := out, func() {}, func() {}
	if hc.Stderr != hc.Stdout {
		if errf, errClose, errWait, err = writerFile(hc.Stderr); err != nil {
			inClose()
			outClose()
			outWait()
			return true, err
		}
	}
	ch, err := srv.start(sandbox.Request{Path: path, Args: args, Dir: hc.Dir, Env: env}, [3]*os.File{in, out, errf})
	// The child holds its own copies now: closing ours lets EOF arrive when it exits.
	inClose()
	outClose()
	errClose()
	if err != nil {
		outWait()
		errWait()
		return false, nil // fall back to the per-command helper
	}
	first, ok := <-ch
	if !ok {
		outWait()
		errWait()
		return false, nil
	}
	rep := first
	if !first.Done {
		pid := first.Pid
		r.mu.Lock()
		r.pgids[pid] = true
		r.mu.Unlock()
		select {
		case rep, ok = <-ch:
		case <-ctx.Done():
			killGroup(pid)
			rep, ok = <-ch
		}
		if !ok {
			rep = sandbox.Reply{Done: true, Code: 126, Err: errServerGone.Error()}
		}
	}
	outWait()
	errWait()
	if rep.Err != "" && first.Done {
		fmt.Fprintln(hc.Stderr, rep.Err)
	}
	switch {
	case rep.Signal != 0:
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		return true, interp.ExitStatus(128 + rep.Signal)
	case rep.Code != 0:
		return true, interp.ExitStatus(rep.Code)
	}
	return true, nil
}
