package engine

import (
	"os"
	"path/filepath"
	"strings"
)

// ProjectOf names the project of a working directory the way the memory
// instruction tells agents to, and the way recall and imports scope by it:
// the name of the top directory of its git repository (else of the
// directory itself), made a valid project id. root is that top directory
// (the directory itself outside a repository). A relative or empty dir has
// no project (""). A directory that does not exist on this machine (a
// session imported from elsewhere) is named by itself.
func ProjectOf(dir string) (project, root string) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", ""
	}
	dir = filepath.Clean(dir)
	root = dir
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return ProjectID(filepath.Base(root)), root
}

// ProjectID makes name a valid project id: letters, digits, '.', '_' and
// '-' are kept (others become '-'), it starts with a letter or digit and is
// at most 128 bytes. "" when nothing is left.
func ProjectID(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	s := strings.TrimLeft(b.String(), "._-")
	if len(s) > 128 {
		s = s[:128]
	}
	return s
}
