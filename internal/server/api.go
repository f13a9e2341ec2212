package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/elicit"
	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/store"
	"github.com/lovia-dev/lovia/internal/store/sqlite"
	"github.com/lovia-dev/lovia/internal/tool"
	"github.com/lovia-dev/lovia/internal/transcript"
)

// Route is one registered route (docs/serve.openapi.json must list exactly these).
type Route struct {
	Method string
	Path   string
	h      http.HandlerFunc
}

func (s *Server) routes() []Route {
	return []Route{
		{"GET", "/", s.page},
		{"GET", "/static/{file}", s.static},
		{"GET", "/api/health", s.health},
		{"POST", "/api/runs", s.startRun},
		{"GET", "/api/runs", s.listRuns},
		{"GET", "/api/runs/{id}", s.getRun},
		{"GET", "/api/runs/{id}/events", s.events},
		{"POST", "/api/runs/{id}/approvals/{approval_id}", s.approve},
		{"POST", "/api/runs/{id}/messages", s.steer},
		{"POST", "/api/runs/{id}/cancel", s.cancel},
		{"POST", "/api/runs/{id}/resume", s.resume},
		{"GET", "/api/sessions", s.listSessions},
		{"GET", "/api/sessions/{id}", s.getSession},
		{"GET", "/api/sessions/{id}/export", s.exportSession},
		{"DELETE", "/api/sessions/{id}", s.deleteSession},
	}
}

// Routes lists the method and path pattern of every route the server registers.
func Routes() []Route {
	return (&Server{}).routes()
}

// decode reads a JSON body into v (application/json only: a form post from another
// page cannot reach a handler).
func decode(r *http.Request, v any) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" {
		return &httpError{http.StatusUnsupportedMediaType, "send the body as application/json"}
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &httpError{http.StatusRequestEntityTooLarge, "the body is too large"}
		}
		return badRequest("bad JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("bad JSON body: more than one value")
	}
	return nil
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	active := 0
	for _, run := range s.sup.list() {
		if run.Status() == "running" {
			active++
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "version": app.Version(), "cwd": s.app.Config.Cwd, "active_runs": active})
}

// RunStarted is the answer of POST /api/runs and /resume.
type RunStarted struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var req StartRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, err)
		return
	}
	run, err := s.sup.Start(r.Context(), req)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, RunStarted{RunID: run.ID, SessionID: run.SessionID})
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	run, err := s.sup.Resume(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, RunStarted{RunID: run.ID, SessionID: run.SessionID})
}

// storedInfo is a run of the store (an earlier process, or evicted from memory).
func storedInfo(ri sqlite.RunInfo) Info {
	in := Info{RunID: ri.ID, SessionID: ri.SessionID, Status: string(ri.Status), Agent: ri.Agent, Turns: ri.Turns,
		Model: ri.Model, Error: ri.Error}
	u := ri.Usage
	in.Usage = &u
	if i := strings.LastIndex(ri.ID, ".sub"); i > 0 {
		in.ParentID = ri.ID[:i]
	}
	st, up := ri.StartedAt, ri.UpdatedAt
	in.StartedAt, in.UpdatedAt = &st, &up
	return in
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	if status != "" && !slices.Contains([]string{"running", "interrupted", "completed", "failed"}, status) {
		writeError(w, http.StatusBadRequest, "status must be running, interrupted, completed or failed")
		return
	}
	seen := map[string]bool{}
	out := []Info{}
	for _, run := range s.sup.list() {
		in := s.sup.info(run)
		seen[in.RunID] = true
		if status == "" || in.Status == status {
			out = append(out, in)
		}
	}
	if s.app.DB != nil {
		stored, err := s.app.DB.Checkpoints().ListRuns(r.Context(), sqlite.RunFilter{Status: store.Status(status), Limit: 200})
		if err != nil {
			s.fail(w, err)
			return
		}
		for _, ri := range stored {
			if !seen[ri.ID] {
				out = append(out, storedInfo(ri))
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if run := s.sup.get(id); run != nil {
		in := s.sup.info(run)
		if s.app.DB != nil {
			if ri, err := s.app.DB.Checkpoints().GetRun(r.Context(), id); err == nil {
				in.Model = ri.Model
				st, up := ri.StartedAt, ri.UpdatedAt
				in.StartedAt, in.UpdatedAt = &st, &up
			}
		}
		s.addCost(r.Context(), &in)
		writeJSON(w, http.StatusOK, in)
		return
	}
	if s.app.DB == nil {
		writeError(w, http.StatusNotFound, "no run "+id)
		return
	}
	ri, err := s.app.DB.Checkpoints().GetRun(r.Context(), id)
	if err != nil {
		if errs.KindOf(err) == errs.KindNotFound || errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, "no run "+id)
			return
		}
		s.fail(w, err)
		return
	}
	in := storedInfo(ri)
	s.addCost(r.Context(), &in)
	writeJSON(w, http.StatusOK, in)
}

// addCost fills the model's context window and the cost estimate of in.
func (s *Server) addCost(ctx context.Context, in *Info) {
	if in.Model == "" {
		return
	}
	if p, err := s.app.Resolve(ctx, in.Model); err == nil {
		in.ContextWindow = p.Info().ContextWindow
	}
	if in.Usage != nil {
		// The run priced its calls; usage recorded before that is priced now.
		in.CostUSD = s.app.Prices.Fill(in.Model, *in.Usage).CostPtr()
	}
}

// events streams a run's events as Server-Sent Events: each event's seq is its id,
// its data the stream-json line. A reconnecting client's Last-Event-ID (or ?from=N)
// resumes after that event; the stream ends after the terminal event.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	run := s.sup.get(r.PathValue("id"))
	if run == nil {
		writeError(w, http.StatusNotFound, "this server holds no events of run "+r.PathValue("id")+" (GET /api/runs/{id} and the session show finished runs)")
		return
	}
	// A resumed run starts a new attempt whose events restart at seq 1; its ids are
	// "ATTEMPT.SEQ" from the second attempt on, so a client holding an id of an
	// earlier attempt gets the current one from its start.
	epoch := run.Epoch()
	var after int64
	bad := func() { writeError(w, http.StatusBadRequest, "Last-Event-ID / from must be an event id") }
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		e, num := 1, id
		if a, b, ok := strings.Cut(id, "."); ok {
			n, err := strconv.Atoi(a)
			if err != nil {
				bad()
				return
			}
			e, num = n, b
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n < 0 {
			bad()
			return
		}
		if e == epoch {
			after = n
		}
	} else if from := r.URL.Query().Get("from"); from != "" {
		n, err := strconv.ParseInt(from, 10, 64)
		if err != nil || n < 0 {
			bad()
			return
		}
		after = n
	}
	evs, ended, gone, wait := run.since(after)
	if gone {
		writeError(w, http.StatusGone, "events before the ones this server kept are gone; start from the session's entries")
		return
	}
	if ended && len(evs) == 0 {
		// Nothing follows the terminal event: 204 tells an EventSource to stop
		// reconnecting.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		for i := range evs {
			_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if err := sseFrame(w, &evs[i], epoch); err != nil {
				return
			}
			after = evs[i].seq
			if evs[i].term {
				fl.Flush()
				return
			}
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(w, ": ping\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-wait:
		}
		evs, ended, gone, wait = run.since(after)
		if gone || ended && len(evs) == 0 {
			return
		}
	}
}

// ApprovalRequest is the body of POST /api/runs/{id}/approvals/{approval_id}.
type ApprovalRequest struct {
	Decision string `json:"decision"`
	Message  string `json:"message,omitempty"`
	// Content answers an MCP elicitation form (approval kind "form").
	Content map[string]any `json:"content,omitempty"`
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	run := s.sup.get(r.PathValue("id"))
	if run == nil {
		writeError(w, http.StatusNotFound, "no live run "+r.PathValue("id"))
		return
	}
	var req ApprovalRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, err)
		return
	}
	var d tool.Decision
	switch req.Decision {
	case "allow":
		d.Allow, d.Message = true, req.Message
		if req.Content != nil {
			b, err := json.Marshal(req.Content)
			if err != nil {
				writeError(w, http.StatusBadRequest, "content: "+err.Error())
				return
			}
			d.Message = string(b)
		}
	case "allow_session":
		d.Allow, d.Session = true, true
	case "deny":
		d.Message = req.Message
	case "cancel":
		d.Message = elicit.CancelMessage
	default:
		writeError(w, http.StatusBadRequest, "decision must be allow, allow_session, deny or cancel")
		return
	}
	if err := s.sup.Approve(run, r.PathValue("approval_id"), d); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "answered"})
}

// MessageRequest is the body of POST /api/runs/{id}/messages.
type MessageRequest struct {
	Text string `json:"text"`
}

func (s *Server) steer(w http.ResponseWriter, r *http.Request) {
	run := s.sup.get(r.PathValue("id"))
	if run == nil {
		writeError(w, http.StatusNotFound, "no live run "+r.PathValue("id"))
		return
	}
	var req MessageRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, err)
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		writeError(w, http.StatusBadRequest, "text is empty")
		return
	}
	if err := s.sup.Steer(run, req.Text); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "queued"})
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	run := s.sup.get(r.PathValue("id"))
	if run == nil {
		writeError(w, http.StatusNotFound, "no live run "+r.PathValue("id"))
		return
	}
	if err := s.sup.Cancel(run); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "cancelling"})
}

// SessionInfo is a session in GET /api/sessions.
type SessionInfo struct {
	sqlite.SessionInfo
	// ActiveRun is the session's running run ("" when none).
	ActiveRun string `json:"active_run,omitempty"`
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	out := []SessionInfo{}
	if s.app.DB != nil {
		list, err := s.app.DB.Sessions().ListSessions(r.Context(), sqlite.SessionFilter{Repo: s.app.Repo(), Limit: 200})
		if err != nil {
			s.fail(w, err)
			return
		}
		for _, si := range list {
			out = append(out, SessionInfo{SessionInfo: si, ActiveRun: s.sup.activeRun(si.ID)})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// SessionDetail is GET /api/sessions/{id}: the session, its runs and its entries.
type SessionDetail struct {
	SessionInfo
	Runs    []sqlite.SessionRun `json:"session_runs"`
	Entries []transcript.Entry  `json:"entries"`
}

func (s *Server) loadSession(w http.ResponseWriter, r *http.Request) (*SessionDetail, bool) {
	id := r.PathValue("id")
	if s.app.DB == nil {
		writeError(w, http.StatusNotFound, "no session "+id)
		return nil, false
	}
	ss := s.app.DB.Sessions()
	si, err := ss.GetSession(r.Context(), id)
	if err != nil {
		if errs.KindOf(err) == errs.KindNotFound {
			writeError(w, http.StatusNotFound, "no session "+id)
			return nil, false
		}
		s.fail(w, err)
		return nil, false
	}
	runs, err := ss.SessionRuns(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return nil, false
	}
	entries, err := ss.Load(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return nil, false
	}
	if runs == nil {
		runs = []sqlite.SessionRun{}
	}
	if entries == nil {
		entries = []transcript.Entry{}
	}
	return &SessionDetail{SessionInfo: SessionInfo{SessionInfo: si, ActiveRun: s.sup.activeRun(id)}, Runs: runs, Entries: entries}, true
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	if d, ok := s.loadSession(w, r); ok {
		writeJSON(w, http.StatusOK, d)
	}
}

func (s *Server) exportSession(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "md"
	}
	if format != "md" && format != "jsonl" {
		writeError(w, http.StatusBadRequest, "format must be md or jsonl")
		return
	}
	d, ok := s.loadSession(w, r)
	if !ok {
		return
	}
	name := d.ID + "." + format
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	if format == "jsonl" {
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		for _, e := range d.Entries {
			_ = enc.Encode(e)
		}
		return
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	exportMarkdown(w, d)
}

func exportMarkdown(w io.Writer, d *SessionDetail) {
	title := d.Title
	if title == "" {
		title = d.ID
	}
	fmt.Fprintf(w, "# %s\n\nSession `%s`", title, d.ID)
	if d.Cwd != "" {
		fmt.Fprintf(w, " in `%s`", d.Cwd)
	}
	fmt.Fprint(w, "\n")
	for _, e := range d.Entries {
		switch e.Type {
		case transcript.TypeInput:
			fmt.Fprintf(w, "\n## User\n\n%s\n", e.Text)
		case transcript.TypeAssistantText:
			fmt.Fprintf(w, "\n## Assistant\n\n%s\n", e.Text)
		case transcript.TypeToolCall:
			fmt.Fprintf(w, "\n**Tool call** `%s`\n\n%s\n", e.Name, fence("json", string(e.Args)))
		case transcript.TypeToolResult:
			fmt.Fprintf(w, "\n**Result** of `%s`\n\n%s\n", e.Name, fence("", e.Text))
		}
	}
}

func fence(lang, s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.app.DB == nil {
		writeError(w, http.StatusNotFound, "no session "+id)
		return
	}
	if active := s.sup.activeRun(id); active != "" {
		writeError(w, http.StatusConflict, "session "+id+" has an active run ("+active+"): cancel it first")
		return
	}
	if err := s.app.DB.Sessions().DeleteSession(r.Context(), id); err != nil {
		switch errs.KindOf(err) {
		case errs.KindNotFound:
			writeError(w, http.StatusNotFound, "no session "+id)
		case errs.KindRunConflict:
			writeError(w, http.StatusConflict, errMessage(err))
		default:
			s.fail(w, err)
		}
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
