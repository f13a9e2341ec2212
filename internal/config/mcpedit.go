package config

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/lovia-dev/lovia/internal/errs"
	"github.com/lovia-dev/lovia/internal/plugin/mcp"
	"github.com/lovia-dev/lovia/internal/safefile"
)

// `lovia mcp add|remove` edit a config file in place: the file's comments, order and
// other settings are kept (goccy/go-yaml's AST), only mcp.servers.NAME changes.

// AddMCPServer adds server name to the config file at path (created if missing).
// An existing server of that name is an error (remove it first).
func AddMCPServer(path, name string, sc mcp.ServerConfig) error {
	if err := (mcp.Config{Servers: map[string]mcp.ServerConfig{name: sc}}).Validate(); err != nil {
		return err
	}
	entry, err := yaml.Marshal(map[string]mcp.ServerConfig{name: sc})
	if err != nil {
		return errs.Wrap(errs.KindInternal, err, "encode the server", "")
	}
	data, err := readForEdit(path)
	if err != nil {
		return err
	}
	var out []byte
	if len(bytes.TrimSpace(data)) == 0 {
		out = append([]byte("mcp:\n  servers:\n"), indent(entry, "    ")...)
	} else {
		f, err := parser.ParseBytes(data, parser.ParseComments)
		if err != nil {
			return errs.Wrap(errs.KindConfig, err, path+" is not valid YAML", "fix the file first, then run the command again")
		}
		servers, _ := yaml.PathString("$.mcp.servers")
		mcpPath, _ := yaml.PathString("$.mcp")
		if n, err := servers.FilterFile(f); err == nil && n != nil {
			if m, ok := n.(*ast.MappingNode); ok {
				for _, v := range m.Values {
					if v.Key.String() == name {
						return errs.Newf(errs.KindUsage, "remove it first: lovia mcp remove "+name, "%s already has an MCP server %q", path, name)
					}
				}
				if len(m.Values) == 0 {
					m.IsFlowStyle = false
				}
			}
			if err := servers.MergeFromReader(f, bytes.NewReader(entry)); err != nil {
				return errs.Wrap(errs.KindInternal, err, "add the server to "+path, "")
			}
			out = []byte(f.String())
		} else if n, err := mcpPath.FilterFile(f); err == nil && n != nil {
			if err := mcpPath.MergeFromReader(f, bytes.NewReader(append([]byte("servers:\n"), indent(entry, "  ")...))); err != nil {
				return errs.Wrap(errs.KindInternal, err, "add the server to "+path, "")
			}
			out = []byte(f.String())
		} else {
			out = append(bytes.TrimRight(data, "\n"), []byte("\nmcp:\n  servers:\n")...)
			out = append(out, indent(entry, "    ")...)
		}
	}
	return writeChecked(path, out, name, true)
}

// RemoveMCPServer removes server name from the config file at path.
func RemoveMCPServer(path, name string) error {
	data, err := readForEdit(path)
	if err != nil {
		return err
	}
	missing := errs.Newf(errs.KindNotFound, "lovia mcp list shows the configured servers and where they come from", "%s has no MCP server %q", path, name)
	if len(bytes.TrimSpace(data)) == 0 {
		return missing
	}
	f, err := parser.ParseBytes(data, parser.ParseComments)
	if err != nil {
		return errs.Wrap(errs.KindConfig, err, path+" is not valid YAML", "fix the file first, then run the command again")
	}
	servers, _ := yaml.PathString("$.mcp.servers")
	n, err := servers.FilterFile(f)
	m, ok := n.(*ast.MappingNode)
	if err != nil || !ok {
		return missing
	}
	found := false
	for i, v := range m.Values {
		if v.Key.String() == name {
			m.Values = append(m.Values[:i], m.Values[i+1:]...)
			found = true
			break
		}
	}
	if !found {
		return missing
	}
	if len(m.Values) == 0 {
		// No servers left: drop the empty mapping (and an empty mcp:) rather than
		// leave "servers:" with nothing under it.
		mcpPath, _ := yaml.PathString("$.mcp")
		if n, err := mcpPath.FilterFile(f); err == nil {
			if mm, ok := n.(*ast.MappingNode); ok {
				mm.Values = dropKey(mm.Values, "servers")
				if len(mm.Values) == 0 && len(f.Docs) > 0 {
					if root, ok := f.Docs[0].Body.(*ast.MappingNode); ok {
						root.Values = dropKey(root.Values, "mcp")
					}
				}
			}
		}
	}
	return writeChecked(path, []byte(f.String()), name, false)
}

func readForEdit(path string) ([]byte, error) {
	data, err := safefile.ReadNamed(path, safefile.MaxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// writeChecked writes data after checking it decodes with the server present (or
// gone): a failed edit never leaves a broken config behind.
func writeChecked(path string, data []byte, name string, want bool) error {
	var f File
	if err := yaml.Unmarshal(data, &f); err != nil {
		return errs.Wrap(errs.KindInternal, err, "the edited "+path+" would not be valid", "edit the file by hand; it was not changed")
	}
	if _, ok := f.MCP.Servers[name]; ok != want {
		return errs.Newf(errs.KindInternal, "edit the file by hand; it was not changed", "editing %s did not take", path)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a dotfiles link stays a link
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return errs.Wrap(errs.KindConfig, err, "create "+filepath.Dir(path), "")
	}
	mode := os.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return errs.Wrap(errs.KindConfig, err, "write "+path, "")
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return errs.Wrap(errs.KindConfig, err, "write "+path, "")
	}
	return nil
}

func indent(b []byte, pre string) []byte {
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out.WriteString(pre)
		}
		out.Write(l)
	}
	return out.Bytes()
}

func dropKey(vs []*ast.MappingValueNode, key string) []*ast.MappingValueNode {
	for i, v := range vs {
		if v.Key.String() == key {
			return append(vs[:i], vs[i+1:]...)
		}
	}
	return vs
}
