package termmd

// The built-in styles, copied from glamour v2.0.1's styles package (ascii, dark and
// light; the others are not used). glamour keeps them in package variables whose
// pointers every user shares; here each call builds a fresh one.

const (
	defaultListIndent      = 2
	defaultListLevelIndent = 4
	defaultMargin          = 2

	defaultHeadingPrefixH2    = "## "
	defaultHeadingPrefixH3    = "### "
	defaultHeadingPrefixH4    = "#### "
	defaultHeadingPrefixH5    = "##### "
	defaultHeadingPrefixH6    = "###### "
	defaultTaskTickedPrefix   = "[✓] "
	defaultTaskUntickedPrefix = "[ ] "
	defaultImageFormat        = "Image: {{.text}} →"
	defaultHorizontalRule     = "\n--------\n"
	defaultArrowBlockPrefix   = "\n🠶 "
)

// ASCIIStyle is glamour's "ascii" style: no colours, plain characters.
func ASCIIStyle() StyleConfig {
	return StyleConfig{
		Document: StyleBlock{
			StylePrimitive: StylePrimitive{
				BlockPrefix: "\n",
				BlockSuffix: "\n",
			},
			Margin: uintPtr(defaultMargin),
		},
		BlockQuote: StyleBlock{
			StylePrimitive: StylePrimitive{},
			Indent:         uintPtr(1),
			IndentToken:    stringPtr("| "),
		},
		Paragraph: StyleBlock{
			StylePrimitive: StylePrimitive{},
		},
		List: StyleList{
			StyleBlock: StyleBlock{
				StylePrimitive: StylePrimitive{},
			},
			LevelIndent: defaultListLevelIndent,
		},
		Heading: StyleBlock{
			StylePrimitive: StylePrimitive{
				BlockSuffix: "\n",
			},
		},
		H1: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: "# ",
			},
		},
		H2: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH2,
			},
		},
		H3: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH3,
			},
		},
		H4: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH4,
			},
		},
		H5: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH5,
			},
		},
		H6: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH6,
			},
		},
		Strikethrough: StylePrimitive{
			BlockPrefix: "~~",
			BlockSuffix: "~~",
		},
		Emph: StylePrimitive{
			BlockPrefix: "*",
			BlockSuffix: "*",
		},
		Strong: StylePrimitive{
			BlockPrefix: "**",
			BlockSuffix: "**",
		},
		HorizontalRule: StylePrimitive{
			Format: defaultHorizontalRule,
		},
		Item: StylePrimitive{
			BlockPrefix: "• ",
		},
		Enumeration: StylePrimitive{
			BlockPrefix: ". ",
		},
		Task: StyleTask{
			Ticked:   "[x] ",
			Unticked: defaultTaskUntickedPrefix,
		},
		ImageText: StylePrimitive{
			Format: defaultImageFormat,
		},
		Code: StyleBlock{
			StylePrimitive: StylePrimitive{
				BlockPrefix: "`",
				BlockSuffix: "`",
			},
		},
		CodeBlock: StyleCodeBlock{
			StyleBlock: StyleBlock{
				Margin: uintPtr(defaultMargin),
			},
		},
		Table: StyleTable{
			CenterSeparator: stringPtr("|"),
			ColumnSeparator: stringPtr("|"),
			RowSeparator:    stringPtr("-"),
		},
		DefinitionDescription: StylePrimitive{
			BlockPrefix: "\n* ",
		},
	}
}

// DarkStyle is glamour's "dark" style.
func DarkStyle() StyleConfig {
	return StyleConfig{
		Document: StyleBlock{
			StylePrimitive: StylePrimitive{
				BlockPrefix: "\n",
				BlockSuffix: "\n",
				Color:       stringPtr("252"),
			},
			Margin: uintPtr(defaultMargin),
		},
		BlockQuote: StyleBlock{
			StylePrimitive: StylePrimitive{},
			Indent:         uintPtr(1),
			IndentToken:    stringPtr("│ "),
		},
		List: StyleList{
			LevelIndent: defaultListIndent,
		},
		Heading: StyleBlock{
			StylePrimitive: StylePrimitive{
				BlockSuffix: "\n",
				Color:       stringPtr("39"),
				Bold:        boolPtr(true),
			},
		},
		H1: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix:          " ",
				Suffix:          " ",
				Color:           stringPtr("228"),
				BackgroundColor: stringPtr("63"),
				Bold:            boolPtr(true),
			},
		},
		H2: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH2,
			},
		},
		H3: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH3,
			},
		},
		H4: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH4,
			},
		},
		H5: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH5,
			},
		},
		H6: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH6,
				Color:  stringPtr("35"),
				Bold:   boolPtr(false),
			},
		},
		Strikethrough: StylePrimitive{
			CrossedOut: boolPtr(true),
		},
		Emph: StylePrimitive{
			Italic: boolPtr(true),
		},
		Strong: StylePrimitive{
			Bold: boolPtr(true),
		},
		HorizontalRule: StylePrimitive{
			Color:  stringPtr("240"),
			Format: defaultHorizontalRule,
		},
		Item: StylePrimitive{
			BlockPrefix: "• ",
		},
		Enumeration: StylePrimitive{
			BlockPrefix: ". ",
		},
		Task: StyleTask{
			StylePrimitive: StylePrimitive{},
			Ticked:         defaultTaskTickedPrefix,
			Unticked:       defaultTaskUntickedPrefix,
		},
		Link: StylePrimitive{
			Color:     stringPtr("30"),
			Underline: boolPtr(true),
		},
		LinkText: StylePrimitive{
			Color: stringPtr("35"),
			Bold:  boolPtr(true),
		},
		Image: StylePrimitive{
			Color:     stringPtr("212"),
			Underline: boolPtr(true),
		},
		ImageText: StylePrimitive{
			Color:  stringPtr("243"),
			Format: defaultImageFormat,
		},
		Code: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix:          "\u00a0", // Use non-breaking space to prevent hard breaks
				Suffix:          "\u00a0", // Use non-breaking space to prevent hard breaks
				Color:           stringPtr("203"),
				BackgroundColor: stringPtr("236"),
			},
		},
		CodeBlock: StyleCodeBlock{
			StyleBlock: StyleBlock{
				StylePrimitive: StylePrimitive{
					Color: stringPtr("244"),
				},
				Margin: uintPtr(defaultMargin),
			},
			Chroma: &Chroma{
				Text: StylePrimitive{
					Color: stringPtr("#C4C4C4"),
				},
				Error: StylePrimitive{
					Color:           stringPtr("#F1F1F1"),
					BackgroundColor: stringPtr("#F05B5B"),
				},
				Comment: StylePrimitive{
					Color: stringPtr("#676767"),
				},
				CommentPreproc: StylePrimitive{
					Color: stringPtr("#FF875F"),
				},
				Keyword: StylePrimitive{
					Color: stringPtr("#00AAFF"),
				},
				KeywordReserved: StylePrimitive{
					Color: stringPtr("#FF5FD2"),
				},
				KeywordNamespace: StylePrimitive{
					Color: stringPtr("#FF5F87"),
				},
				KeywordType: StylePrimitive{
					Color: stringPtr("#6E6ED8"),
				},
				Operator: StylePrimitive{
					Color: stringPtr("#EF8080"),
				},
				Punctuation: StylePrimitive{
					Color: stringPtr("#E8E8A8"),
				},
				Name: StylePrimitive{
					Color: stringPtr("#C4C4C4"),
				},
				NameBuiltin: StylePrimitive{
					Color: stringPtr("#FF8EC7"),
				},
				NameTag: StylePrimitive{
					Color: stringPtr("#B083EA"),
				},
				NameAttribute: StylePrimitive{
					Color: stringPtr("#7A7AE6"),
				},
				NameClass: StylePrimitive{
					Color:     stringPtr("#F1F1F1"),
					Underline: boolPtr(true),
					Bold:      boolPtr(true),
				},
				NameDecorator: StylePrimitive{
					Color: stringPtr("#FFFF87"),
				},
				NameFunction: StylePrimitive{
					Color: stringPtr("#00D787"),
				},
				LiteralNumber: StylePrimitive{
					Color: stringPtr("#6EEFC0"),
				},
				LiteralString: StylePrimitive{
					Color: stringPtr("#C69669"),
				},
				LiteralStringEscape: StylePrimitive{
					Color: stringPtr("#AFFFD7"),
				},
				GenericDeleted: StylePrimitive{
					Color: stringPtr("#FD5B5B"),
				},
				GenericEmph: StylePrimitive{
					Italic: boolPtr(true),
				},
				GenericInserted: StylePrimitive{
					Color: stringPtr("#00D787"),
				},
				GenericStrong: StylePrimitive{
					Bold: boolPtr(true),
				},
				GenericSubheading: StylePrimitive{
					Color: stringPtr("#777777"),
				},
				Background: StylePrimitive{
					BackgroundColor: stringPtr("#373737"),
				},
			},
		},
		Table: StyleTable{
			StyleBlock: StyleBlock{
				StylePrimitive: StylePrimitive{},
			},
		},
		DefinitionDescription: StylePrimitive{
			BlockPrefix: defaultArrowBlockPrefix,
		},
	}
}

// LightStyle is glamour's "light" style.
func LightStyle() StyleConfig {
	return StyleConfig{
		Document: StyleBlock{
			StylePrimitive: StylePrimitive{
				BlockPrefix: "\n",
				BlockSuffix: "\n",
				Color:       stringPtr("234"),
			},
			Margin: uintPtr(defaultMargin),
		},
		BlockQuote: StyleBlock{
			StylePrimitive: StylePrimitive{},
			Indent:         uintPtr(1),
			IndentToken:    stringPtr("│ "),
		},
		List: StyleList{
			LevelIndent: defaultListIndent,
		},
		Heading: StyleBlock{
			StylePrimitive: StylePrimitive{
				BlockSuffix: "\n",
				Color:       stringPtr("27"),
				Bold:        boolPtr(true),
			},
		},
		H1: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix:          " ",
				Suffix:          " ",
				Color:           stringPtr("228"),
				BackgroundColor: stringPtr("63"),
				Bold:            boolPtr(true),
			},
		},
		H2: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH2,
			},
		},
		H3: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH3,
			},
		},
		H4: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH4,
			},
		},
		H5: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH5,
			},
		},
		H6: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix: defaultHeadingPrefixH6,
				Bold:   boolPtr(false),
			},
		},
		Strikethrough: StylePrimitive{
			CrossedOut: boolPtr(true),
		},
		Emph: StylePrimitive{
			Italic: boolPtr(true),
		},
		Strong: StylePrimitive{
			Bold: boolPtr(true),
		},
		HorizontalRule: StylePrimitive{
			Color:  stringPtr("249"),
			Format: defaultHorizontalRule,
		},
		Item: StylePrimitive{
			BlockPrefix: "• ",
		},
		Enumeration: StylePrimitive{
			BlockPrefix: ". ",
		},
		Task: StyleTask{
			StylePrimitive: StylePrimitive{},
			Ticked:         defaultTaskTickedPrefix,
			Unticked:       defaultTaskUntickedPrefix,
		},
		Link: StylePrimitive{
			Color:     stringPtr("36"),
			Underline: boolPtr(true),
		},
		LinkText: StylePrimitive{
			Color: stringPtr("29"),
			Bold:  boolPtr(true),
		},
		Image: StylePrimitive{
			Color:     stringPtr("205"),
			Underline: boolPtr(true),
		},
		ImageText: StylePrimitive{
			Color:  stringPtr("243"),
			Format: defaultImageFormat,
		},
		Code: StyleBlock{
			StylePrimitive: StylePrimitive{
				Prefix:          "\u00a0", // Use non-breaking space to prevent hard breaks
				Suffix:          "\u00a0", // Use non-breaking space to prevent hard breaks
				Color:           stringPtr("203"),
				BackgroundColor: stringPtr("254"),
			},
		},
		CodeBlock: StyleCodeBlock{
			StyleBlock: StyleBlock{
				StylePrimitive: StylePrimitive{
					Color: stringPtr("242"),
				},
				Margin: uintPtr(defaultMargin),
			},
			Chroma: &Chroma{
				Text: StylePrimitive{
					Color: stringPtr("#2A2A2A"),
				},
				Error: StylePrimitive{
					Color:           stringPtr("#F1F1F1"),
					BackgroundColor: stringPtr("#FF5555"),
				},
				Comment: StylePrimitive{
					Color: stringPtr("#8D8D8D"),
				},
				CommentPreproc: StylePrimitive{
					Color: stringPtr("#FF875F"),
				},
				Keyword: StylePrimitive{
					Color: stringPtr("#279EFC"),
				},
				KeywordReserved: StylePrimitive{
					Color: stringPtr("#FF5FD2"),
				},
				KeywordNamespace: StylePrimitive{
					Color: stringPtr("#FB406F"),
				},
				KeywordType: StylePrimitive{
					Color: stringPtr("#7049C2"),
				},
				Operator: StylePrimitive{
					Color: stringPtr("#FF2626"),
				},
				Punctuation: StylePrimitive{
					Color: stringPtr("#FA7878"),
				},
				NameBuiltin: StylePrimitive{
					Color: stringPtr("#0A1BB1"),
				},
				NameTag: StylePrimitive{
					Color: stringPtr("#581290"),
				},
				NameAttribute: StylePrimitive{
					Color: stringPtr("#8362CB"),
				},
				NameClass: StylePrimitive{
					Color:     stringPtr("#212121"),
					Underline: boolPtr(true),
					Bold:      boolPtr(true),
				},
				NameConstant: StylePrimitive{
					Color: stringPtr("#581290"),
				},
				NameDecorator: StylePrimitive{
					Color: stringPtr("#A3A322"),
				},
				NameFunction: StylePrimitive{
					Color: stringPtr("#019F57"),
				},
				LiteralNumber: StylePrimitive{
					Color: stringPtr("#22CCAE"),
				},
				LiteralString: StylePrimitive{
					Color: stringPtr("#7E5B38"),
				},
				LiteralStringEscape: StylePrimitive{
					Color: stringPtr("#00AEAE"),
				},
				GenericDeleted: StylePrimitive{
					Color: stringPtr("#FD5B5B"),
				},
				GenericEmph: StylePrimitive{
					Italic: boolPtr(true),
				},
				GenericInserted: StylePrimitive{
					Color: stringPtr("#00D787"),
				},
				GenericStrong: StylePrimitive{
					Bold: boolPtr(true),
				},
				GenericSubheading: StylePrimitive{
					Color: stringPtr("#777777"),
				},
				Background: StylePrimitive{
					BackgroundColor: stringPtr("#373737"),
				},
			},
		},
		Table: StyleTable{
			StyleBlock: StyleBlock{
				StylePrimitive: StylePrimitive{},
			},
		},
		DefinitionDescription: StylePrimitive{
			BlockPrefix: defaultArrowBlockPrefix,
		},
	}
}

func boolPtr(b bool) *bool       { return &b }
func stringPtr(s string) *string { return &s }
func uintPtr(u uint) *uint       { return &u }
