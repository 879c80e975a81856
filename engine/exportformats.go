package engine

// ExportFormats checks the formats of an export (FormatJSONL,
// FormatMarkdown): empty means both.
func ExportFormats(formats []string) ([]string, error) {
	if len(formats) == 0 {
		return []string{FormatJSONL, FormatMarkdown}, nil
	}
	for _, f := range formats {
		if f != FormatJSONL && f != FormatMarkdown {
			return nil, invalid("format", "must be jsonl or md, got %q", f)
		}
	}
	return formats, nil
}
