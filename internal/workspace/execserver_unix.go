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

	wmu    sync.Mutex
	mu     sync.Mutex
	next   int
	waits  map[int]chan sandbox.Reply
	dead   bool
	hello  chan sandbox.Report // the server's first message
	exited chan struct{}       // closed once the server was waited for
	// protect is which protected and hidden paths existed when it started (see
	// server).
	protect string
}

var errServerGone = errors.New("sandbox exec server exited")

// startExecServer starts the helper in server mode with attr (namespaces or not) and
// env (the allow-list: the server's own environ is readable by what it starts; GOGC
// is off until the helper runs, see sandbox.ServerEnv), and waits for its report.
func startExecServer(helper []string, o sandbox.Options, attr *syscall.SysProcAttr, env []string) (*execServer, sandbox.Report, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET, 0)
	if err != nil {
		return nil, sandbox.Report{}, fmt.Errorf("socketpair: %w", err)
	}
	// Close-on-exec set right away (SOCK_CLOEXEC is not portable); ExtraFiles clears
	// it for the server's end in the server only.
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	parent := os.NewFile(uintptr(fds[0]), "sandbox-parent")
	child := os.NewFile(uintptr(fds[1]), "sandbox-child")
	s := &execServer{sock: parent, errb: &strings.Builder{}, waits: map[int]chan sandbox.Reply{}, hello: make(chan sandbox.Report, 1), exited: make(chan struct{})}
	s.cmd = exec.Command(helper[0], append(append([]string(nil), helper[1:]...), sandbox.ServerArgs(o)...)...)
	s.cmd.ExtraFiles = []*os.File{child}
	s.cmd.Stderr = &lockedWriter{w: s.errb}
	s.cmd.Env = sandbox.ServerEnv(env)
	s.cmd.Dir = "/"
	s.cmd.SysProcAttr = attr
	err = s.cmd.Start()
	// Only the server holds its end now: its exit reads as EOF here.
	child.Close()
	if err != nil {
		parent.Close()
		if o.NS {
			err = sandbox.NamespaceError(err)
		}
		return nil, sandbox.Report{}, err
	}
	go s.read()
	select {
	case rep, ok := <-s.hello:
		if ok {
			return s, rep, nil
		}
	case <-time.After(30 * time.Second):
		s.close()
	}
	<-s.exited
	msg := strings.TrimSpace(s.errb.String())
	if msg == "" {
		msg = "exited before it was ready"
	}
	if o.NS && s.cmd.ProcessState != nil && s.cmd.ProcessState.ExitCode() == sandbox.ExitNoNamespaces {
		return nil, sandbox.Report{}, fmt.Errorf("the sandbox exec server failed: %s: %w", msg, sandbox.ErrNoNamespaces)
	}
	return nil, sandbox.Report{}, fmt.Errorf("the sandbox exec server failed: %s", msg)
}

// withFd runs f on the socket's descriptor. Control holds a reference, so a
// concurrent close cannot release (and the kernel reuse) the descriptor while f runs;
// after close it fails with os.ErrClosed. (File.Fd would race with Close.)
func (s *execServer) withFd(f func(fd int) error) error {
	rc, err := s.sock.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func (s *execServer) read() {
	buf := make([]byte, 64<<10)
	for {
		n := 0
		err := s.withFd(func(fd int) error {
			for {
				var err error
				n, _, _, _, err = syscall.Recvmsg(fd, buf, nil, 0)
				if err != syscall.EINTR {
					return err
				}
			}
		})
		if err != nil || n == 0 {
			break
		}
		var r sandbox.Reply
		if json.Unmarshal(buf[:n], &r) != nil {
			continue
		}
		if r.Hello != nil {
			s.hello <- *r.Hello
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
	close(s.hello)
	_ = s.cmd.Wait()
	close(s.exited)
}

func (s *execServer) alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.dead
}

// start sends one command with its stdio; the channel yields the start reply (Pid,
// or Done when it could not start) and then the exit.
func (s *execServer) start(req sandbox.Request, stdio [3]*os.File) (<-chan sandbox.Reply, int, error) {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return nil, 0, errServerGone
	}
	s.next++
	req.ID = s.next
	ch := make(chan sandbox.Reply, 2)
	s.waits[req.ID] = ch
	s.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return nil, 0, err
	}
	rights := syscall.UnixRights(int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd()))
	s.wmu.Lock()
	err = s.withFd(func(fd int) error { return syscall.Sendmsg(fd, b, rights, nil, 0) })
	s.wmu.Unlock()
	if err != nil {
		s.mu.Lock()
		delete(s.waits, req.ID)
		s.mu.Unlock()
		return nil, 0, fmt.Errorf("sending to the sandbox exec server: %w", err)
	}
	return ch, req.ID, nil
}

// kill asks the server to SIGKILL request id's processes (its PID namespace, or its
// process group without namespaces). Pids the server reports are its own namespace's:
// never signal them from here.
func (s *execServer) kill(id int) {
	b, _ := json.Marshal(sandbox.Request{Kill: id})
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.withFd(func(fd int) error { return syscall.Sendmsg(fd, b, nil, nil, 0) })
}

// busy reports whether requests are in flight.
func (s *execServer) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waits) > 0
}

func (s *execServer) close() {
	s.sock.Close()
	if s.cmd.Process != nil {
		// The server is the init of its PID namespace (or leads its process group):
		// everything it started dies with it.
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		_ = s.cmd.Process.Kill()
	}
}

// server returns the exec server for req (one in the network namespace, one outside
// it), starting it on first use; nil when it cannot run (the per-command helper is
// used then).
func (e *SandboxExecutor) server(req ExecRequest) *execServer {
	ns := e.useNamespaces()
	o, isolate := e.options(ExecRequest{Network: req.Network}, ns)
	i := 1
	if isolate {
		i = 0
	}
	key := e.mountKey()
	e.mu.Lock()
	defer e.mu.Unlock()
	if srv := e.srv[i]; srv != nil && srv.alive() {
		if srv.protect == key || !ns {
			return srv
		}
		// A protected or hidden path appeared since the server started (git init, mkdir
		// .lovia, an MCP login): its mount namespace lacks the mount, so start a fresh
		// one. One
		// still running commands (a background server) is retired: it finishes them
		// and is closed with the executor.
		if srv.busy() {
			e.retired = append(e.retired, srv)
		} else {
			srv.close()
		}
		e.srv[i] = nil
	}
	if e.srvFailed[i] {
		return nil
	}
	srv, err := e.startServer(o, ns, isolate)
	if err != nil {
		e.srvFailed[i] = true
		return nil
	}
	srv.protect = key
	e.srv[i] = srv
	return srv
}

// startServer starts one exec server (e.mu held).
func (e *SandboxExecutor) startServer(o sandbox.Options, ns, isolate bool) (*execServer, error) {
	attr := sandbox.PlainAttr()
	if ns {
		attr = sandbox.NamespaceAttr(isolate)
	}
	srv, rep, err := startExecServer(e.Helper, o, attr, e.Env)
	if err != nil {
		return nil, err
	}
	e.stateMu.Lock()
	e.report = rep
	e.stateMu.Unlock()
	return srv, nil
}

// probeServer starts the server commands without the network use (Probe).
func (e *SandboxExecutor) probeServer() error {
	ns := e.useNamespaces()
	o, isolate := e.options(ExecRequest{}, ns)
	i := 1
	if isolate {
		i = 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.srv[i] != nil {
		e.srv[i].close()
		e.srv[i] = nil
	}
	srv, err := e.startServer(o, ns, isolate)
	if err != nil {
		return err
	}
	srv.protect = e.mountKey()
	e.srv[i], e.srvFailed[i] = srv, false
	return nil
}

// mountKey names which protected and hidden paths exist: a server whose mount
// namespace lacks one that appeared since (git init, an MCP login making lovia's
// token directory) is replaced.
func (e *SandboxExecutor) mountKey() string {
	return existingKey(e.Protect) + "/" + existingKey(e.Hide)
}

// existingKey names which of ps exist (a few stats per command).
func existingKey(ps []string) string {
	var b strings.Builder
	for _, p := range ps {
		if _, err := os.Lstat(p); err == nil {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	return b.String()
}

// Close stops the exec servers (and so everything they started).
func (e *SandboxExecutor) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, srv := range e.srv {
		if srv != nil {
			srv.close()
			e.srv[i] = nil
		}
	}
	for _, srv := range e.retired {
		srv.close()
	}
	e.retired = nil
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
	ch, id, err := srv.start(sandbox.Request{Path: path, Args: args, Dir: hc.Dir, Env: env}, [3]*os.File{in, out, errf})
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
		r.mu.Lock()
		r.kills = append(r.kills, func() { srv.kill(id) })
		r.mu.Unlock()
		select {
		case rep, ok = <-ch:
		case <-ctx.Done():
			srv.kill(id)
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
