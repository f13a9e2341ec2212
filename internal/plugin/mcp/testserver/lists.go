package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// With -lists: resources, a resource template, prompts and roots, and tools that change the
// lists at run time (the server then sends list_changed):
//   - add_tool {name}: adds a tool that answers "NAME here"
//   - add_prompt {name}: adds a prompt without arguments
//   - add_resource {uri, text}: adds a text resource
//   - roots: lists the client's roots

type nameIn struct {
	Name string `json:"name"`
}

type resourceIn struct {
	URI  string `json:"uri"`
	Text string `json:"text"`
}

func textResource(uri, text string) mcp.ResourceHandler {
	return func(_ context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, nil
	}
}

// listsFlag turns them on (-lists), so the other tests' tool lists stay as they are.
var listsFlag = flag.Bool("lists", false, "offer resources, prompts, roots and the list-changing tools")

func addLists(s *mcp.Server) {
	if !*listsFlag {
		return
	}
	// The list-changing tools answer once their list_changed is sent (the SDK sends it
	// a little later, debounced), as a server that changes a list within a call does.
	sent := map[string]chan struct{}{}
	for _, m := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"} {
		sent[m] = make(chan struct{}, 64)
	}
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if ch, ok := sent[method]; ok {
				ch <- struct{}{}
			}
			return res, err
		}
	})
	awaitSent := func(method string) {
		select {
		case <-sent[method]:
		case <-time.After(10 * time.Second):
		}
	}
	s.AddResource(&mcp.Resource{URI: "test://notes", Name: "notes", MIMEType: "text/plain", Description: "Some notes"}, textResource("test://notes", "the notes say hello"))
	s.AddResource(&mcp.Resource{URI: "test://pixel", Name: "pixel", MIMEType: "image/png"}, func(_ context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://pixel", MIMEType: "image/png", Blob: pixel}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		id := strings.TrimPrefix(r.Params.URI, "test://items/")
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: "item number " + id}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greet someone", Arguments: []*mcp.PromptArgument{
		{Name: "who", Required: true}, {Name: "mood"},
	}}, func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		a := r.Params.Arguments
		text := "Say hello to " + a["who"]
		if a["mood"] != "" {
			text += " in a " + a["mood"] + " mood"
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: text}},
			{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://notes", MIMEType: "text/plain", Text: "the notes say hello"}}},
		}}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Add a tool"}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		name := in.Name
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Added at run time"}, func(_ context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " here"}}}, nil, nil
		})
		awaitSent("notifications/tools/list_changed")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added tool " + name}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add_prompt", Description: "Add a prompt"}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		name := in.Name
		s.AddPrompt(&mcp.Prompt{Name: name}, func(_ context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "prompt " + name}}}}, nil
		})
		awaitSent("notifications/prompts/list_changed")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added prompt " + name}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add_resource", Description: "Add a text resource"}, func(_ context.Context, _ *mcp.CallToolRequest, in resourceIn) (*mcp.CallToolResult, any, error) {
		s.AddResource(&mcp.Resource{URI: in.URI, Name: in.URI}, textResource(in.URI, in.Text))
		awaitSent("notifications/resources/list_changed")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added resource " + in.URI}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "List the client's roots"}, func(ctx context.Context, r *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		// Protocol 2026-07-28 asks for roots inside the call (multi round-trip): the
		// first answer requests them, the retry carries them.
		res, ok := r.Params.InputResponses["roots"].(*mcp.ListRootsResult)
		if !ok {
			if r.Session.InitializeParams().ProtocolVersion >= "2026-07-28" {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil, nil
			}
			var err error
			if res, err = r.Session.ListRoots(ctx, nil); err != nil {
				return nil, nil, err
			}
		}
		var b strings.Builder
		for _, root := range res.Roots {
			fmt.Fprintf(&b, "%s %s\n", root.URI, root.Name)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "roots:\n" + b.String()}}}, nil, nil
	})
}
