package e2e

import (
	"encoding/json"
	"fmt"
)

// cmpCacheSim replays recorded Anthropic requests through a model of the Messages
// API prompt cache: a breakpoint writes the prefix through its block; a later
// request reads the longest written prefix found at one of its breakpoints or up to
// 20 blocks before one. Prefixes run tools → system → messages, compared without
// cache_control.
type cmpCacheSim struct {
	written    map[uint64]bool
	read, sent int64
}

// cmpBlock is one cacheable unit of a request, with the hash of the prefix through it.
type cmpBlock struct {
	label string // provCacheMarks' naming: tools[i], system[i], messages[i].j
	size  int
	hash  uint64
}

func cmpBlocks(m map[string]any) []cmpBlock {
	var out []cmpBlock
	h := uint64(14695981039346656037) // FNV-1a, running over the whole prefix
	add := func(label string, v any) {
		b, _ := json.Marshal(provNoCache(v))
		for _, c := range append(b, 0) {
			h ^= uint64(c)
			h *= 1099511628211
		}
		out = append(out, cmpBlock{label: label, size: len(b), hash: h})
	}
	for i, tl := range provList(m, "tools") {
		add(fmt.Sprintf("tools[%d]", i), tl)
	}
	for i, s := range provList(m, "system") {
		add(fmt.Sprintf("system[%d]", i), s)
	}
	for i, msg := range provList(m, "messages") {
		for j, blk := range provBlocks(msg) {
			add(fmt.Sprintf("messages[%d].%d", i, j), map[string]any{"role": msg["role"], "block": blk})
		}
	}
	return out
}

// add replays one request whose breakpoints are at marks (labels).
func (c *cmpCacheSim) add(blocks []cmpBlock, marks []string) {
	if c.written == nil {
		c.written = map[uint64]bool{}
	}
	total := 0
	at := map[string]int{}
	for i, b := range blocks {
		total += b.size
		at[b.label] = i
	}
	best := -1
	var points []int
	for _, m := range marks {
		i, ok := at[m]
		if !ok {
			continue
		}
		points = append(points, i)
		for j := i; j >= 0 && j >= i-20; j-- {
			if c.written[blocks[j].hash] {
				best = max(best, j)
				break
			}
		}
	}
	read := 0
	for i := 0; i <= best; i++ {
		read += blocks[i].size
	}
	c.read += int64(read)
	c.sent += int64(total)
	for _, i := range points {
		c.written[blocks[i].hash] = true
	}
}

// ratio is the share of request bytes read from the cache.
func (c *cmpCacheSim) ratio() float64 {
	if c.sent == 0 {
		return 0
	}
	return float64(c.read) / float64(c.sent)
}
