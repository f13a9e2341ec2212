package tui

import (
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// editorStartMsg: the prompt was written to path; run the editor on it.
type editorStartMsg struct {
	path   string
	editor string
}

func createTemp(text string) (string, error) {
	f, err := os.CreateTemp("", "lovia-prompt-*.md")
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}

// editorCommand splits $VISUAL / $EDITOR (which may carry flags, e.g. "code -w").
func editorCommand(editor, path string) *exec.Cmd {
	if editor == "" {
		editor = os.Getenv("VISUAL")
	}
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	parts := strings.Fields(editor)
	return exec.Command(parts[0], append(parts[1:], path)...)
}

func (m *Model) runEditor(msg editorStartMsg) tea.Cmd {
	path := msg.path
	return tea.ExecProcess(editorCommand(msg.editor, path), func(err error) tea.Msg {
		return editorDoneMsg{path: path, err: err}
	})
}

// editorDoneMsg: the editor exited; read the file back in a command.
type editorDoneMsg struct {
	path string
	err  error
}

func readBack(path string, runErr error) tea.Cmd {
	return func() tea.Msg {
		defer os.Remove(path)
		if runErr != nil {
			return editorMsg{err: runErr}
		}
		b, err := os.ReadFile(path)
		return editorMsg{text: string(b), err: err}
	}
}
