package workspace

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// maxProcBuffer bounds what a background process keeps unread.
const maxProcBuffer = 1 << 20

// bgProc is a shell command running in the background.
type bgProc struct {
	id      string
	command string
	started time.Time
	cancel  context.CancelFunc
	done    chan struct{}

	mu      sync.Mutex
	buf     []byte
	dropped int64 // bytes discarded before buf[0]
	read    int64 // absolute offset already returned
	result  ShellResult
}

func (p *bgProc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	if over := len(p.buf) - maxProcBuffer; over > 0 {
		p.buf = append(p.buf[:0:0], p.buf[over:]...)
		p.dropped += int64(over)
	}
	return len(b), nil
}

func (p *bgProc) kill() {
	p.cancel()
	<-p.done
}

func (p *bgProc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// StartBackground starts req in the background and returns its id. The command is
// checked like a foreground one; it is killed by KillProcess or Close, or when its
// timeout (if any) passes.
func (w *Workspace) StartBackground(req ShellRequest) string {
	ctx, cancel := context.WithCancel(context.Background())
	w.mu.Lock()
	w.nproc++
	id := fmt.Sprintf("p%d", w.nproc)
	p := &bgProc{id: id, command: req.Command, started: time.Now(), cancel: cancel, done: make(chan struct{})}
	w.procs[id] = p
	w.mu.Unlock()
	req.Output = p
	if req.Timeout <= 0 {
		req.Timeout = 24 * time.Hour
	}
	go func() {
		defer close(p.done)
		res := w.RunShell(ctx, req)
		p.mu.Lock()
		p.result = res
		p.mu.Unlock()
	}()
	return id
}

func (w *Workspace) proc(id string) (*bgProc, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.procs[strings.TrimSpace(id)]
	if !ok {
		var ids []string
		for k := range w.procs {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		if len(ids) == 0 {
			return nil, fmt.Errorf("no background process %q (none are running; start one with shell and background=true)", id)
		}
		return nil, fmt.Errorf("no background process %q (known: %s)", id, strings.Join(ids, ", "))
	}
	return p, nil
}

// ReadProcessOutput returns the output produced since the last read, and the status.
// wait > 0 waits up to that long for the process to exit first.
func (w *Workspace) ReadProcessOutput(ctx context.Context, id string, wait time.Duration) (string, error) {
	p, err := w.proc(id)
	if err != nil {
		return "", err
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-p.done:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	from := p.read - p.dropped
	if from < 0 {
		fmt.Fprintf(&b, "[... %d bytes dropped before this read ...]\n", -from)
		from = 0
	}
	out := string(p.buf[from:])
	p.read = p.dropped + int64(len(p.buf))
	b.WriteString(out)
	status := "running"
	if !p.running() {
		status = describeExit(p.result)
	}
	text := b.String()
	if text == "" {
		text = "(no new output)\n"
	} else if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return fmt.Sprintf("%s[process %s: %s, started %s ago]", text, p.id, status, time.Since(p.started).Round(time.Second)), nil
}

// KillProcess kills a background process's groups and forgets it.
func (w *Workspace) KillProcess(id string) (string, error) {
	p, err := w.proc(id)
	if err != nil {
		return "", err
	}
	was := p.running()
	p.kill()
	w.mu.Lock()
	delete(w.procs, p.id)
	w.mu.Unlock()
	if !was {
		return fmt.Sprintf("process %s had already finished (%s)", p.id, describeExit(p.result)), nil
	}
	return fmt.Sprintf("process %s killed", p.id), nil
}

func describeExit(r ShellResult) string {
	switch {
	case r.Denied != nil:
		return "stopped: " + r.Denied.Error()
	case r.TimedOut:
		return "timed out, killed"
	case r.Err != nil && r.ExitCode == -1:
		return "killed"
	case r.Err != nil:
		return "failed: " + r.Err.Error()
	}
	return fmt.Sprintf("exited with status %d", r.ExitCode)
}
