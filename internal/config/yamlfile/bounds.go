package yamlfile

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/lovia-dev/lovia/internal/errs"
)

// Limits on the shape of a YAML document. goccy/go-yaml has no option to bound alias
// expansion (an alias is copied wherever it is used, so nine levels of nine aliases
// become 9^9 values: the "billion laughs"), and its parser is quadratic in nesting
// depth; both are checked here before any decoder sees the document.
const (
	// MaxDepth bounds nesting (mappings and sequences, aliases expanded).
	MaxDepth = 100
	// MaxAliasNodes bounds the nodes that aliases add when expanded.
	MaxAliasNodes = 100_000
)

// Check refuses a document nested deeper than MaxDepth or whose aliases expand to
// more than MaxAliasNodes nodes. It runs in time linear in the input. Syntax errors
// are left to the decoder (it reports them with their position).
func Check(path string, data []byte) error {
	if err := checkTokens(path, lexer.Tokenize(string(data))); err != nil {
		return err
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil
	}
	w := &walker{path: path, anchors: map[string]size{}}
	for _, doc := range f.Docs {
		if _, err := w.walk(doc); err != nil {
			return err
		}
	}
	return nil
}

// checkTokens bounds nesting from the token stream, so the parser never sees a
// document deep enough to be slow: flow collections by their brackets, block
// collections by a stack of the columns their entries and keys start at.
func checkTokens(path string, tks token.Tokens) error {
	flow := 0
	var block []int
	var prev *token.Token
	for _, tk := range tks {
		col := 0
		if tk.Position != nil {
			col = tk.Position.Column
		}
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0)
		case token.DocumentHeaderType, token.DocumentEndType:
			flow, block = 0, block[:0]
		case token.SequenceEntryType, token.MappingKeyType, token.MappingValueType:
			if flow > 0 {
				break
			}
			if tk.Type == token.MappingValueType && prev != nil && prev.Position != nil {
				col = prev.Position.Column // the key's column
			}
			for len(block) > 0 && block[len(block)-1] >= col {
				block = block[:len(block)-1]
			}
			block = append(block, col)
		}
		if tk.Type != token.SpaceType && tk.Type != token.CommentType {
			prev = tk
		}
		if flow+len(block) > MaxDepth {
			return deep(path, tk)
		}
	}
	return nil
}

func deep(path string, tk *token.Token) error {
	return &errs.Error{Kind: errs.KindConfig,
		Msg:  fmt.Sprintf("%s: YAML nested deeper than %d levels", at(path, tk), MaxDepth),
		Hint: fmt.Sprintf("flatten %s: lovia refuses YAML nested more than %d levels deep (aliases count as what they stand for)", path, MaxDepth)}
}

func at(path string, tk *token.Token) string {
	if tk != nil && tk.Position != nil {
		return fmt.Sprintf("%s:%d:%d", path, tk.Position.Line, tk.Position.Column)
	}
	return path
}

// size is a subtree's node count and nesting depth with its aliases expanded.
type size struct{ nodes, depth int }

type walker struct {
	path    string
	anchors map[string]size // by name, the latest definition seen so far
	aliased int             // nodes added by expanding aliases
}

// walk measures n in document order (so an alias refers to the anchor defined last
// before it, as in the decoder). Each anchor is measured once and each alias costs
// its anchor's size, so the walk itself is linear however large the expansion.
func (w *walker) walk(n ast.Node) (size, error) {
	if n == nil {
		return size{}, nil
	}
	var s size
	var children []ast.Node
	container := false
	switch x := n.(type) {
	case *ast.DocumentNode:
		children = []ast.Node{x.Body}
	case *ast.MappingNode:
		container = true
		for _, v := range x.Values {
			children = append(children, v)
		}
	case *ast.MappingValueNode:
		children = []ast.Node{x.Key, x.Value}
	case *ast.MappingKeyNode:
		children = []ast.Node{x.Value}
	case *ast.SequenceNode:
		container = true
		children = x.Values
	case *ast.TagNode:
		children = []ast.Node{x.Value}
	case *ast.AnchorNode:
		v, err := w.walk(x.Value)
		if err != nil {
			return size{}, err
		}
		if x.Name != nil {
			w.anchors[x.Name.GetToken().Value] = v
		}
		return size{nodes: v.nodes + 1, depth: v.depth}, nil
	case *ast.AliasNode:
		name := ""
		if x.Value != nil {
			name = x.Value.GetToken().Value
		}
		v := w.anchors[name] // unknown: the decoder reports it
		w.aliased += v.nodes
		if w.aliased > MaxAliasNodes {
			return size{}, &errs.Error{Kind: errs.KindConfig,
				Msg: fmt.Sprintf("%s: YAML aliases expand to more than %d nodes (the limit)", at(w.path, x.GetToken()), MaxAliasNodes),
				Hint: fmt.Sprintf("write the values out in %s instead of repeating large anchors (&name / *name); "+
					"lovia refuses documents whose aliases stand for more than %d values (an alias bomb)", w.path, MaxAliasNodes)}
		}
		return size{nodes: max(v.nodes, 1), depth: v.depth}, nil
	}
	for _, c := range children {
		cs, err := w.walk(c)
		if err != nil {
			return size{}, err
		}
		s.nodes += cs.nodes
		s.depth = max(s.depth, cs.depth)
	}
	s.nodes++
	if container {
		s.depth++
	}
	if s.depth > MaxDepth {
		return size{}, deep(w.path, n.GetToken())
	}
	return s, nil
}
