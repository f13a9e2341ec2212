package server

import (
	"embed"
	"net/http"
	"path"
)

// ui is the chat page: plain HTML, CSS and JavaScript, no build step.
//
//go:embed ui/index.html ui/app.js ui/app.css
var ui embed.FS

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	data, err := ui.ReadFile("ui/index.html")
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(data)
}

var staticTypes = map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	ct, ok := staticTypes[path.Ext(name)]
	if !ok || name == "index.html" {
		http.NotFound(w, r)
		return
	}
	data, err := ui.ReadFile("ui/" + path.Base(name))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(data)
}
