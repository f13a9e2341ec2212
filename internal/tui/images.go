package tui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/lovia-dev/lovia/internal/textutil"

	tea "charm.land/bubbletea/v2"

	"github.com/lovia-dev/lovia/internal/transcript"
)

// Images in the chat: Ctrl-V with an image on the clipboard, a pasted path of an
// image file, or an @mention of one attaches the image to the next message. The
// prompt shows each as a token ("[image 1]") the user can move or delete; what is
// still in the prompt when it is sent is attached, in order.

// ImageAttacher reads an image file the user named (a pasted path, @shot.png)
// through the workspace policy. It returns fs.ErrNotExist (wrapped) when there is
// no such file and an error matching ErrNotImage when the file is no image.
type ImageAttacher interface {
	AttachImage(ctx context.Context, path string) (transcript.Attachment, error)
}

// ClipboardImager reads the image on the system clipboard.
type ClipboardImager interface {
	ClipboardImage(ctx context.Context) (transcript.Attachment, error)
}

// ErrNotImage is what an ImageAttacher returns (wrapped) for a file that is no image.
var ErrNotImage = errors.New("not an image")

// imageState is the images attached to the prompt being written.
type imageState struct {
	seq    int
	tokens map[string]transcript.Attachment
}

// addImage inserts a token for att at the cursor.
func (m *Model) addImage(att transcript.Attachment) string {
	if m.imgs.tokens == nil {
		m.imgs.tokens = map[string]transcript.Attachment{}
	}
	m.imgs.seq++
	token := fmt.Sprintf("[image %d]", m.imgs.seq)
	m.imgs.tokens[token] = att
	m.input.InsertString(token)
	m.comp = nil
	return token
}

// takeImages returns the images whose tokens are in text, in the order they appear,
// and forgets all of the prompt's images.
func (m *Model) takeImages(text string) []transcript.Attachment {
	if len(m.imgs.tokens) == 0 {
		return nil
	}
	type at struct {
		pos int
		att transcript.Attachment
	}
	var found []at
	for tok, att := range m.imgs.tokens {
		if i := strings.Index(text, tok); i >= 0 {
			found = append(found, at{i, att})
		}
	}
	m.imgs = imageState{}
	for i := 1; i < len(found); i++ { // few: insertion sort
		for j := i; j > 0 && found[j].pos < found[j-1].pos; j-- {
			found[j], found[j-1] = found[j-1], found[j]
		}
	}
	out := make([]transcript.Attachment, len(found))
	for i, f := range found {
		out[i] = f.att
	}
	return out
}

// pasteClipboardImage (Ctrl-V) reads the clipboard's image in a command and
// attaches it, or says why it could not.
func (m *Model) pasteClipboardImage() tea.Cmd {
	cb, ok := m.backend.(ClipboardImager)
	if !ok {
		m.notice = "images cannot be pasted here"
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		att, err := cb.ClipboardImage(ctx)
		return applyMsg(func(m *Model) tea.Cmd {
			if err != nil {
				m.notice = "clipboard: " + err.Error()
				return nil
			}
			tok := m.addImage(att)
			m.notice = fmt.Sprintf("%s: %s from the clipboard (%s)", tok, att.MIME, textutil.Bytes(int64(len(att.Data))))
			return nil
		})
	}
}

// pastedImagePath handles a paste that is the path of one file (as a file manager
// or a terminal's drag and drop pastes it): when the file is an image it is
// attached, else the text is pasted as it is. false: not a path; paste normally.
func (m *Model) pastedImagePath(text string) (tea.Cmd, bool) {
	at, ok := m.backend.(ImageAttacher)
	if !ok {
		return nil, false
	}
	p := pastedPath(text)
	if p == "" {
		return nil, false
	}
	ctx := m.ctx
	return func() tea.Msg {
		att, err := at.AttachImage(ctx, p)
		return applyMsg(func(m *Model) tea.Cmd {
			switch {
			case err == nil:
				tok := m.addImage(att)
				m.notice = fmt.Sprintf("%s: %s (%s)", tok, att.Name, textutil.Bytes(int64(len(att.Data))))
			case errors.Is(err, fs.ErrNotExist), errors.Is(err, ErrNotImage):
				m.input.InsertString(text)
			default:
				m.input.InsertString(text)
				m.notice = "image not attached: " + err.Error()
			}
			m.updateCompletion()
			return nil
		})
	}, true
}

// pastedPath returns the path a paste stands for ("" when it is not one path):
// one line, possibly quoted or a file:// URL, naming a file with an image
// extension. The extension only picks candidates; the content decides.
func pastedPath(text string) string {
	s := strings.TrimSpace(text)
	if s == "" || strings.ContainsAny(s, "\n\r") || len(s) > 4096 {
		return ""
	}
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	s = strings.TrimPrefix(s, "file://")
	s = strings.ReplaceAll(s, `\ `, " ") // a shell-escaped drag and drop
	lower := strings.ToLower(s)
	for _, ext := range []string{".png", ".jpg", ".jpeg", ".gif", ".webp"} {
		if strings.HasSuffix(lower, ext) {
			return s
		}
	}
	return ""
}

// attachImageMentions attaches the images of prompt's @mentions; the attacher it
// returns skips them, so attachMentions does not try them again as text.
func attachImageMentions(ctx context.Context, b Backend, prompt string) ([]transcript.Attachment, []string, Backend) {
	at, ok := b.(ImageAttacher)
	if !ok {
		return nil, nil, b
	}
	var atts []transcript.Attachment
	var notes []string
	skip := map[string]bool{}
	for _, p := range textutil.Mentions(prompt) {
		att, err := at.AttachImage(ctx, p)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, ErrNotImage):
			continue
		case err != nil:
			notes = append(notes, fmt.Sprintf("@%s not attached: %v", p, err))
		default:
			atts = append(atts, att)
			notes = append(notes, fmt.Sprintf("attached image %s (%s, %s)", p, att.MIME, textutil.Bytes(int64(len(att.Data)))))
		}
		skip[p] = true
	}
	if len(skip) == 0 {
		return atts, notes, b
	}
	return atts, notes, skipAttacher{Backend: b, skip: skip}
}

// skipAttacher is a Backend whose AttachFile does not see the mentions already
// attached as images.
type skipAttacher struct {
	Backend
	skip map[string]bool
}

func (s skipAttacher) AttachFile(ctx context.Context, path string, limit int) (string, bool, error) {
	at, ok := s.Backend.(Attacher)
	if !ok || s.skip[path] {
		return "", false, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	return at.AttachFile(ctx, path, limit)
}

// imageChips is the note shown with a user message that carries images.
func imageChips(atts []transcript.Attachment) string {
	var chips []string
	for _, a := range atts {
		if strings.HasPrefix(a.MIME, "image/") {
			chips = append(chips, fmt.Sprintf("[image %d]", len(chips)+1))
		}
	}
	return strings.Join(chips, " ")
}

// holdImages keeps a message with images in the prompt while a run works: a
// queued message reaches the run as text only (the mailbox), so its images would
// be lost.
func (m *Model) holdImages(text string) bool {
	for tok := range m.imgs.tokens {
		if strings.Contains(text, tok) {
			m.notice = "a message with images is sent when the run ends (Esc stops it)"
			m.input.SetValue(text)
			return true
		}
	}
	return false
}
