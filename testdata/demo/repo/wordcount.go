// Package wordcount counts words.
package wordcount

import "strings"

// Count returns the number of words in s: runs of non-space characters.
func Count(s string) int {
	return len(strings.Split(s, " "))
}
