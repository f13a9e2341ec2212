package web

import (
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Page is an HTML document converted for a model to read.
type Page struct {
	Title    string
	Markdown string
}

// skipped elements never carry readable content (or are page chrome).
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Iframe: true, atom.Form: true, atom.Button: true, atom.Select: true,
	atom.Nav: true, atom.Footer: true, atom.Head: true, atom.Input: true, atom.Textarea: true,
	atom.Canvas: true, atom.Object: true, atom.Embed: true, atom.Dialog: true,
}

// block elements start and end on their own line.
var block = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Header: true, atom.Aside: true, atom.Figure: true, atom.Figcaption: true,
	atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Address: true, atom.Details: true, atom.Summary: true,
}

// HTMLToMarkdown converts an HTML document to Markdown. base resolves relative links
// (nil keeps them as written). It prefers <main>, then <article>, then <body>, and
// drops scripts, styles, navigation and forms.
func HTMLToMarkdown(r io.Reader, base *url.URL) (Page, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return Page{}, fmt.Errorf("parse HTML: %w", err)
	}
	var p Page
	if t := find(doc, atom.Title); t != nil {
		p.Title = collapse(textOf(t))
	}
	root := find(doc, atom.Main)
	if root == nil {
		root = find(doc, atom.Article)
	}
	if root == nil {
		root = find(doc, atom.Body)
	}
	if root == nil {
		root = doc
	}
	c := &converter{base: base}
	c.children(root)
	p.Markdown = tidy(c.b.String())
	return p, nil
}

func find(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if f := find(ch, a); f != nil {
			return f
		}
	}
	return nil
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		if n.Type == html.ElementNode && skipped[n.DataAtom] && n.DataAtom != atom.Head {
			return
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(n)
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

var spaces = regexp.MustCompile(`[ \t\r\n\f]+`)

func collapse(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

type converter struct {
	b     strings.Builder
	base  *url.URL
	lists []listState // open lists, innermost last
	pre   int         // inside <pre>
	quote int         // blockquote depth
}

type listState struct {
	ordered bool
	n       int
}

// prefix is what every new line starts with inside blockquotes.
func (c *converter) prefix() string { return strings.Repeat("> ", c.quote) }

// newline ends the current line (if any text is on it).
func (c *converter) newline() {
	s := c.b.String()
	if s == "" || strings.HasSuffix(s, "\n") {
		return
	}
	c.b.WriteString("\n" + c.prefix())
}

// paragraph makes sure a blank line separates what comes next.
func (c *converter) paragraph() {
	s := c.b.String()
	if s == "" || strings.HasSuffix(s, "\n\n") || strings.HasSuffix(s, "\n\n"+c.prefix()) {
		return
	}
	if strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n"+c.prefix()) {
		c.b.WriteString("\n" + c.prefix())
		return
	}
	c.b.WriteString("\n\n" + c.prefix())
}

func (c *converter) write(s string) {
	if c.quote > 0 {
		s = strings.ReplaceAll(s, "\n", "\n"+c.prefix())
	}
	c.b.WriteString(s)
}

func (c *converter) children(n *html.Node) {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.node(ch)
	}
}

func (c *converter) resolve(ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" || c.base == nil {
		return ref
	}
	u, err := c.base.Parse(ref)
	if err != nil {
		return ref
	}
	return u.String()
}

// inline renders n's content as one line of inline markdown.
func (c *converter) inline(n *html.Node) string {
	sub := &converter{base: c.base}
	sub.children(n)
	return collapse(sub.b.String())
}

var mdEscape = strings.NewReplacer(`*`, `\*`, `_`, `\_`, "`", "\\`", `[`, `\[`, `]`, `\]`)

func (c *converter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		if c.pre > 0 {
			c.write(n.Data)
			return
		}
		t := spaces.ReplaceAllString(n.Data, " ")
		s := c.b.String()
		if strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\n") || s == "" || strings.HasSuffix(s, c.prefix()) && c.quote > 0 {
			t = strings.TrimLeft(t, " ")
		}
		c.write(mdEscape.Replace(t))
		return
	case html.ElementNode:
	default:
		c.children(n)
		return
	}
	if skipped[n.DataAtom] || attr(n, "hidden") != "" || attr(n, "aria-hidden") == "true" {
		return
	}
	switch a := n.DataAtom; a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		text := c.inline(n)
		if text == "" {
			return
		}
		c.paragraph()
		c.write(strings.Repeat("#", int(a.String()[1]-'0')) + " " + text)
		c.paragraph()
	case atom.Br:
		c.write("  \n" + c.prefix())
	case atom.Hr:
		c.paragraph()
		c.write("---")
		c.paragraph()
	case atom.A:
		text := c.inline(n)
		href := attr(n, "href")
		switch {
		case text == "":
		case href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:"):
			c.write(text)
		default:
			c.write("[" + text + "](" + c.resolve(href) + ")")
		}
	case atom.Img:
		alt := collapse(attr(n, "alt"))
		if src := attr(n, "src"); src != "" && !strings.HasPrefix(src, "data:") {
			c.write("![" + mdEscape.Replace(alt) + "](" + c.resolve(src) + ")")
		}
	case atom.Strong, atom.B:
		if t := c.inline(n); t != "" {
			c.write("**" + t + "**")
		}
	case atom.Em, atom.I:
		if t := c.inline(n); t != "" {
			c.write("*" + t + "*")
		}
	case atom.Del, atom.S:
		if t := c.inline(n); t != "" {
			c.write("~~" + t + "~~")
		}
	case atom.Code, atom.Kbd, atom.Samp:
		if c.pre > 0 {
			c.children(n)
			return
		}
		t := collapse(textOf(n))
		if t == "" {
			return
		}
		fence := "`"
		if strings.Contains(t, "`") {
			fence = "`` "
			c.write(fence + t + " ``")
			return
		}
		c.write(fence + t + fence)
	case atom.Pre:
		lang := ""
		if code := find(n, atom.Code); code != nil {
			for _, cls := range strings.Fields(attr(code, "class")) {
				if l, ok := strings.CutPrefix(cls, "language-"); ok {
					lang = l
				}
			}
		}
		body := strings.Trim(textOf(n), "\n")
		fence := "```"
		for strings.Contains(body, fence) {
			fence += "`"
		}
		c.paragraph()
		c.write(fence + lang + "\n" + body + "\n" + fence)
		c.paragraph()
	case atom.Blockquote:
		c.paragraph()
		c.quote++
		c.write("> ")
		c.children(n)
		// Drop the empty quoted lines the last inner block left behind.
		trimmed := quoteTail.ReplaceAllString(c.b.String(), "")
		c.b.Reset()
		c.b.WriteString(trimmed)
		c.quote--
		c.paragraph()
	case atom.Ul, atom.Ol:
		if len(c.lists) == 0 {
			c.paragraph()
		} else {
			c.newline()
		}
		c.lists = append(c.lists, listState{ordered: a == atom.Ol})
		c.children(n)
		c.lists = c.lists[:len(c.lists)-1]
		if len(c.lists) == 0 {
			c.paragraph()
		}
	case atom.Li:
		c.newline()
		depth := len(c.lists)
		marker := "- "
		if depth > 0 {
			st := &c.lists[depth-1]
			st.n++
			if st.ordered {
				marker = fmt.Sprintf("%d. ", st.n)
			}
		} else {
			depth = 1
		}
		c.write(strings.Repeat("  ", depth-1) + marker)
		c.children(n)
	case atom.Table:
		c.table(n)
	default:
		if block[a] {
			c.paragraph()
			c.children(n)
			c.paragraph()
			return
		}
		c.children(n)
	}
}

// table renders rows as a pipe table (the first row is the header).
func (c *converter) table(n *html.Node) {
	var rows [][]string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Tr {
			var row []string
			for cell := n.FirstChild; cell != nil; cell = cell.NextSibling {
				if cell.Type == html.ElementNode && (cell.DataAtom == atom.Td || cell.DataAtom == atom.Th) {
					row = append(row, strings.ReplaceAll(c.inline(cell), "|", `\|`))
				}
			}
			if len(row) > 0 {
				rows = append(rows, row)
			}
			return
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(n)
	if len(rows) == 0 {
		return
	}
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	c.paragraph()
	for i, r := range rows {
		for len(r) < cols {
			r = append(r, "")
		}
		c.write("| " + strings.Join(r, " | ") + " |\n")
		if i == 0 {
			c.write("|" + strings.Repeat(" --- |", cols) + "\n")
		}
	}
	c.paragraph()
}

var quoteTail = regexp.MustCompile(`(\n(> ?)*)+$`)

var blankRuns = regexp.MustCompile(`\n(?:[ \t]*\n){2,}`)

// tidy trims trailing spaces (except hard breaks) and squeezes blank lines.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, "  ") && strings.TrimSpace(l) != "" {
			lines[i] = strings.TrimRight(l, " ") + "  "
			continue
		}
		lines[i] = strings.TrimRight(l, " \t")
	}
	s = strings.Join(lines, "\n")
	s = blankRuns.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}
