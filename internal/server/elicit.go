package server

import (
	"fmt"

	"github.com/lovia-dev/lovia/internal/elicit"
	"github.com/lovia-dev/lovia/internal/event"
	"github.com/lovia-dev/lovia/internal/tool"
)

// checkForm refuses an accepted MCP elicitation form whose values do not satisfy
// its schema, so the page can say why before anything reaches the server.
func checkForm(a *event.Approval, d tool.Decision) error {
	if a == nil || a.Kind != elicit.Kind || !d.Allow {
		return nil
	}
	f, err := elicit.Parse(a.Form)
	if err != nil {
		return fmt.Errorf("this form cannot be answered: %w", err)
	}
	content, _, err := elicit.Answer(true, d.Message)
	if err != nil {
		return err
	}
	if err := f.Validate(content); err != nil {
		return fmt.Errorf("the form is not complete: %w", err)
	}
	return nil
}
