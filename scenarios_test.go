package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const scenarioCatalogue = "docs/SCENARIOS.md"

// scenarioPrefixes are the groups of docs/SCENARIOS.md.
const scenarioPrefixes = `POP|ACK|CHG|REV|RET|POLL|ORD|BAT|DEC`

var (
	// scenarioDefined matches a catalogue entry: "- **ACK-08** …".
	scenarioDefined = regexp.MustCompile(`(?m)^- \*\*((?:` + scenarioPrefixes + `)-\d\d)\*\*`)
	// scenarioCited matches an id in text ("ACK-08") or in a test name
	// ("TestACK08_…").
	scenarioCited = regexp.MustCompile(`\b(` + scenarioPrefixes + `)-(\d\d)\b|\bTest(` + scenarioPrefixes + `)(\d\d)_`)
)

// TestScenarioIDsAreCatalogued: every scenario id that a .go or .md file of
// the repository cites (in text, or in a TestXXXnn_ name) has an entry in
// docs/SCENARIOS.md, and every entry there is cited somewhere.
func TestScenarioIDsAreCatalogued(t *testing.T) {
	cat, err := os.ReadFile(scenarioCatalogue)
	require.NoError(t, err)
	defined := map[string]bool{}
	for _, m := range scenarioDefined.FindAllStringSubmatch(string(cat), -1) {
		require.False(t, defined[m[1]], "%s lists %s twice", scenarioCatalogue, m[1])
		defined[m[1]] = true
	}
	require.NotEmpty(t, defined, "no entries found in %s", scenarioCatalogue)

	cited := map[string][]string{} // id → files citing it
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "target") {
				return filepath.SkipDir
			}
			return nil
		}
		if path == scenarioCatalogue || path == "scenarios_test.go" || !(strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range scenarioCited.FindAllStringSubmatch(string(b), -1) {
			id := m[1] + "-" + m[2]
			if m[3] != "" {
				id = m[3] + "-" + m[4]
			}
			if !slices.Contains(cited[id], path) {
				cited[id] = append(cited[id], path)
			}
		}
		return nil
	})
	require.NoError(t, err)

	for id, files := range cited {
		if !defined[id] {
			t.Errorf("%s is cited by %v but has no entry in %s", id, files, scenarioCatalogue)
		}
	}
	for id := range defined {
		if len(cited[id]) == 0 {
			t.Errorf("%s lists %s, which no test, comment or document cites", scenarioCatalogue, id)
		}
	}
}
