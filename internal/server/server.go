// Package server is `lovia serve`: an HTTP + Server-Sent Events API and an embedded
// browser chat UI over the same App, runtime and approvals as `lovia chat` and
// `lovia run`. Runs belong to the server's Supervisor, not to a connection.
//
// Security: every request carries the access token (Authorization: Bearer, or the
// HttpOnly cookie set by opening the printed URL), compared in constant time. The
// Host header must name the listening address or a loopback name (DNS rebinding), and
// a request with a foreign Origin is refused (other pages). Model and tool output is
// only ever put in the page as text (the UI never uses innerHTML), and a strict
// Content-Security-Policy forbids inline and foreign scripts besides.
package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lovia-dev/lovia/internal/app"
	"github.com/lovia-dev/lovia/internal/safefile"
)

// Options configure a Server.
type Options struct {
	// Listen is the address (default 127.0.0.1:7878; port 0 picks a free one).
	Listen string
	// ApprovalTimeout denies an approval nobody answered in time (default 10m).
	ApprovalTimeout time.Duration
	// MaxEvents bounds the events kept per run for replay (default 100000).
	MaxEvents int
	// MaxRuns bounds the finished runs kept in memory (default 200).
	MaxRuns int
	// Token is the access token ("" = random).
	Token string
}

const (
	maxPrompt   = 1 << 20
	maxBody     = maxPrompt + 64<<10
	cookieName  = "lovia_token"
	defaultAddr = "127.0.0.1:7878"
)

// Server is a running `lovia serve`.
type Server struct {
	app   *app.App
	sup   *Supervisor
	opts  Options
	token string
	log   *slog.Logger
	ln    net.Listener
	// hosts are the Host header values (host:port, lower case) a request may carry.
	hosts map[string]bool
	mux   *http.ServeMux
}

// New builds a server over a and listens (the address is known from then on). ctx is
// the lifetime of the runs: Serve stops them when it ends.
func New(ctx context.Context, a *app.App, opts Options) (*Server, error) {
	if opts.Listen == "" {
		opts.Listen = defaultAddr
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = 10 * time.Minute
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = 100000
	}
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = 200
	}
	tok := opts.Token
	if tok == "" {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		tok = hex.EncodeToString(b[:])
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", opts.Listen, err)
	}
	s := &Server{app: a, opts: opts, token: tok, log: a.Log, ln: ln, hosts: map[string]bool{}}
	s.sup = newSupervisor(context.WithoutCancel(ctx), a, opts)
	a.SubagentEvents = s.sup.childEvent
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	lhost, _, _ := net.SplitHostPort(opts.Listen)
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		s.hosts[h+":"+port] = true
	}
	if lhost != "" && !isUnspecified(lhost) {
		s.hosts[strings.ToLower(net.JoinHostPort(lhost, port))] = true
	} else if isUnspecified(lhost) || lhost == "" {
		// Listening on every interface: the machine's own addresses and name are
		// legitimate hosts (a rebinding attacker's domain name still is not).
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, ad := range addrs {
				if ipn, ok := ad.(*net.IPNet); ok {
					s.hosts[strings.ToLower(net.JoinHostPort(ipn.IP.String(), port))] = true
				}
			}
		}
		if hn, err := os.Hostname(); err == nil {
			s.hosts[strings.ToLower(hn)+":"+port] = true
		}
	}
	s.mux = http.NewServeMux()
	for _, rt := range s.routes() {
		pattern := rt.Path
		if pattern == "/" {
			pattern = "/{$}" // the page only, not every unknown path
		}
		s.mux.HandleFunc(rt.Method+" "+pattern, rt.h)
	}
	return s, nil
}

func isUnspecified(host string) bool {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return host == "" || ip != nil && ip.IsUnspecified()
}

// Loopback reports whether addr listens on loopback only.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Token is the access token.
func (s *Server) Token() string { return s.token }

// URL is the address to open in a browser, with the token.
func (s *Server) URL() string {
	host, port, _ := net.SplitHostPort(s.Addr())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/?token=" + s.token
}

// ServeInfo is what serve.json holds.
type ServeInfo struct {
	URL   string `json:"url"`
	Token string `json:"token"`
	PID   int    `json:"pid"`
}

// WriteInfo writes $LOVIA_HOME/serve.json (0600, replaced atomically: a link planted
// there is replaced, never followed) so scripts and IDE extensions find the server.
func (s *Server) WriteInfo(home string) (string, error) {
	if err := safefile.PrivateDir(home); err != nil {
		return "", err
	}
	path := filepath.Join(home, "serve.json")
	data, err := json.MarshalIndent(ServeInfo{URL: s.URL(), Token: s.token, PID: os.Getpid()}, "", "  ")
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(home, ".serve-*.json")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, werr := f.Write(append(data, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp, 0o600)); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, nil
}

// RemoveInfo removes serve.json if it still describes this process.
func RemoveInfo(home string) {
	path := filepath.Join(home, "serve.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var in ServeInfo
	if json.Unmarshal(data, &in) == nil && in.PID == os.Getpid() {
		os.Remove(path)
	}
}

// Serve answers requests until ctx ends, then interrupts the live runs (they stay
// checkpointed and resumable), lets their streams deliver the terminal events, and
// closes.
func (s *Server) Serve(ctx context.Context) error {
	// Requests do not end with ctx: the streams must still deliver the runs' terminal
	// events, which Shutdown waits for.
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	serr := s.sup.Shutdown(sctx)
	// Streams end after their terminal events; Shutdown waits for them briefly.
	shctx, cancel2 := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel2()
	if err := hs.Shutdown(shctx); err != nil {
		hs.Close()
	}
	return serr
}

// Handler is the server's HTTP handler (security checks, then the routes).
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if !s.hosts[strings.ToLower(r.Host)] {
			writeError(w, http.StatusForbidden, "unexpected Host header "+fmt.Sprintf("%q", r.Host)+": open the address lovia serve printed")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.sameOrigin(o) {
			writeError(w, http.StatusForbidden, "requests from other origins are refused")
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/" && r.URL.Query().Has("token") {
			s.exchange(w, r)
			return
		}
		how := s.authorized(r)
		if how == "" {
			if r.Method == http.MethodGet && r.URL.Path == "/" {
				h.Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintln(w, "lovia serve: open the URL with ?token=… that lovia serve printed (also in $LOVIA_HOME/serve.json).")
				return
			}
			writeError(w, http.StatusUnauthorized, "missing or wrong access token (Authorization: Bearer TOKEN; see $LOVIA_HOME/serve.json)")
			return
		}
		// A cookie rides along with any request the browser makes: a state change
		// authorised by it must come from this page (the Origin a browser sends with
		// every POST and DELETE).
		if how == "cookie" && r.Method != http.MethodGet && r.Method != http.MethodHead && r.Header.Get("Origin") == "" {
			writeError(w, http.StatusForbidden, "a request authorised by the cookie must carry its Origin")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		s.mux.ServeHTTP(w, r)
	})
}

func (s *Server) sameOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Path != "" && u.Path != "/" {
		return false
	}
	return s.hosts[strings.ToLower(u.Host)]
}

// authorized says how the request proved it holds the token ("bearer", "cookie"),
// or "" when it did not.
func (s *Server) authorized(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if tok, ok := strings.CutPrefix(a, "Bearer "); ok && s.tokenOK(tok) {
			return "bearer"
		}
		return ""
	}
	if c, err := r.Cookie(cookieName); err == nil && s.tokenOK(c.Value) {
		return "cookie"
	}
	return ""
}

func (s *Server) tokenOK(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
}

// exchange turns /?token=T into the cookie and sends the browser to / (the token
// leaves the address bar and the history).
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	if !s.tokenOK(r.URL.Query().Get("token")) {
		writeError(w, http.StatusUnauthorized, "wrong access token")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

// apiError is the body of every error response.
type apiError struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

// fail writes err with its status (500 for an unexpected error, logged).
func (s *Server) fail(w http.ResponseWriter, err error) {
	var he *httpError
	if errors.As(err, &he) {
		writeError(w, he.status, he.msg)
		return
	}
	s.log.Error("serve: request failed", "err", err)
	writeError(w, http.StatusInternalServerError, errMessage(err))
}

// sseFrame writes one event: its seq is the SSE id, its stream-json object the data
// (JSON has no raw newlines, so it is one data line).
func sseFrame(w http.ResponseWriter, f *frame, epoch int) error {
	b := make([]byte, 0, len(f.data)+32)
	b = append(b, "id: "...)
	if epoch > 1 {
		b = strconv.AppendInt(b, int64(epoch), 10)
		b = append(b, '.')
	}
	b = strconv.AppendInt(b, f.seq, 10)
	b = append(b, "\ndata: "...)
	b = append(b, f.data...)
	b = append(b, "\n\n"...)
	_, err := w.Write(b)
	return err
}
