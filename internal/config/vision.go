package config

import "strings"

// VisionOverrides returns the models.<name>.vision settings: whether a model takes
// images, overriding lovia's table.
func (c *Config) VisionOverrides() map[string]bool {
	m := map[string]bool{}
	for name, mc := range c.Models {
		if mc.Vision == nil {
			continue
		}
		m[name] = *mc.Vision
		if _, model, ok := strings.Cut(name, ":"); ok {
			if _, dup := m[model]; !dup {
				m[model] = *mc.Vision
			}
		}
	}
	return m
}
