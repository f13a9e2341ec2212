// Package buildinfo reports which lovia this is. Release builds set the values with
// -ldflags "-X"; other builds fall back to what the Go toolchain recorded.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the release build (see .goreleaser.yaml). They are written only by the linker.
var (
	version = ""
	commit  = ""
	date    = ""
)

// Info describes the running binary.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

// Get returns the build information.
func Get() Info {
	in := Info{Version: version, Commit: commit, Date: date, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && in.Commit == "":
				in.Commit = s.Value
			case s.Key == "vcs.time" && in.Date == "":
				in.Date = s.Value
			case s.Key == "vcs.modified" && s.Value == "true" && in.Commit != "" && commit == "":
				in.Commit += "-dirty"
			}
		}
	}
	if in.Version == "" {
		in.Version = "devel"
	}
	if len(in.Commit) > 12 && commit == "" {
		in.Commit = in.Commit[:12]
	}
	return in
}

// String is the one-line form `lovia version` prints.
func (in Info) String() string {
	s := "lovia " + in.Version
	if in.Commit != "" {
		s += " (commit " + in.Commit
		if in.Date != "" {
			s += ", built " + in.Date
		}
		s += ")"
	}
	return s + fmt.Sprintf(" %s %s/%s", in.Go, in.OS, in.Arch)
}
