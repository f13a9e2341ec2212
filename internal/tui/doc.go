// Package tui is `lovia chat`: a Bubble Tea program in inline mode.
//
// Finished blocks — a user message, a settled part of a reply, a tool call with its
// result — are rendered once and printed above the program (tea.Println), so they
// live in the terminal's own scrollback: native scroll, search and copy, and a frame
// that costs the same at message 10 and message 5,000. Only the live region is
// redrawn: the unsettled tail of the streaming reply, running tools, a pending
// approval, queued steering messages, the prompt and the status line.
//
// One root Model owns Update; the parts are plain render functions. Update does no
// I/O: starting runs, reading sessions, walking files for @ completion and the
// external editor run in commands that report back as messages. The model talks to
// the application through the small Backend and Handle interfaces (the runtime's
// *runtime.Handle is a Handle), which tests replace with fakes.
package tui
