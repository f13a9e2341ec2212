package tui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/lovia-dev/lovia/internal/textutil"
)

// @path in a prompt attaches the file's content to the message, as Claude Code does:
// the model sees the text at once instead of spending a turn on read_file.

// Attacher reads a file the user mentioned with @path. The backend judges the path
// with the workspace policy and opens it the safe way; it returns fs.ErrNotExist
// (wrapped) when there is no such file, so "@alice" in a sentence stays a word.
type Attacher interface {
	AttachFile(ctx context.Context, path string, limit int) (text string, truncated bool, err error)
}

const (
	attachLimit    = 256 << 10 // per file
	attachMaxFiles = 10
)

// attachMentions appends the content of each mentioned file to prompt, and returns
// the notes to show the user (what was attached, cut short or refused).
func attachMentions(ctx context.Context, b Backend, prompt string) (string, []string) {
	at, ok := b.(Attacher)
	if !ok {
		return prompt, nil
	}
	paths := textutil.Mentions(prompt)
	if len(paths) == 0 {
		return prompt, nil
	}
	var sb strings.Builder
	sb.WriteString(prompt)
	var notes []string
	n := 0
	for _, p := range paths {
		if n == attachMaxFiles {
			notes = append(notes, fmt.Sprintf("only the first %d mentioned files are attached", attachMaxFiles))
			break
		}
		text, truncated, err := at.AttachFile(ctx, p, attachLimit)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("@%s not attached: %v", p, err))
			continue
		}
		n++
		fmt.Fprintf(&sb, "\n\n<attached_file path=%q>\n%s", p, text)
		if !strings.HasSuffix(text, "\n") {
			sb.WriteByte('\n')
		}
		note := fmt.Sprintf("attached %s (%s)", p, textutil.Bytes(int64(len(text))))
		if truncated {
			fmt.Fprintf(&sb, "[truncated: only the first %s of the file are attached; read_file shows the rest]\n", textutil.Bytes(int64(attachLimit)))
			note = fmt.Sprintf("attached %s, truncated to its first %s", p, textutil.Bytes(int64(attachLimit)))
		}
		sb.WriteString("</attached_file>")
		notes = append(notes, note)
	}
	return sb.String(), notes
}
