package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDocExamples runs every "$ mdk ..." command of the README's and
// docs/*.md's code blocks, in order, in one directory that holds the
// repository's testdata, so that each command sees the files the ones
// before it wrote. Where the docs show output under a command, the output
// must match it line by line ("..." stands for any lines). A command whose
// input is not shipped (a public trace to download, a recording of this
// machine) is skipped when it fails for a missing file, and logged.
//
// One change to the commands as written: mdk gen makes a small trace
// (--pages 3000 --windows 40, unless they are given), so that verify, tune
// and the others on it stay fast.
func TestDocExamples(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	ran, skipped := 0, 0
	for _, doc := range docs {
		for _, ex := range docExamples(t, doc) {
			args, stdoutFile := shellWords(t, ex.command)
			if args[1] == "gen" && !slices.Contains(args, "--pages") {
				args = append(args, "--pages", "3000", "--windows", "40")
			}
			code, out, errs := run(t, "", args[1:]...)
			where := filepath.Base(doc) + ":" + strconv.Itoa(ex.line)
			if code != 0 {
				if strings.Contains(errs, "no such file or directory") || strings.Contains(errs, "matches no") {
					skipped++
					t.Logf("%s: skipped (input not shipped): $ %s: %s", where, ex.command, strings.TrimSpace(errs))
					continue
				}
				t.Errorf("%s: $ %s: exit %d: %s", where, ex.command, code, errs)
				continue
			}
			ran++
			if stdoutFile != "" {
				if err := os.WriteFile(stdoutFile, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if len(ex.output) > 0 && !matchShown(ex.output, strings.Split(strings.TrimRight(out, "\n"), "\n")) {
				t.Errorf("%s: $ %s: output\n%s\ndoes not match the docs':\n%s", where, ex.command, out, strings.Join(ex.output, "\n"))
			}
		}
	}
	if ran < 10 {
		t.Errorf("ran only %d examples (%d skipped); the parser misses them", ran, skipped)
	}
	t.Logf("%d examples ran, %d skipped", ran, skipped)
}

// docExample is one "$ mdk" command of a doc and the output shown under it.
type docExample struct {
	line    int
	command string // without "$ ", continuation lines joined
	output  []string
}

// docExamples returns the "$ mdk" commands of the code blocks of path.
func docExamples(t *testing.T, path string) []docExample {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docExample
	var cur *docExample
	inBlock, cont := false, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " ")
		if strings.HasPrefix(line, "```") {
			inBlock, cur = !inBlock, nil
			continue
		}
		switch {
		case !inBlock:
		case cont:
			cur.command += " " + strings.TrimSpace(strings.TrimSuffix(line, "\\"))
			cont = strings.HasSuffix(line, "\\")
		case strings.HasPrefix(line, "$ mdk "):
			out = append(out, docExample{line: n, command: strings.TrimSpace(strings.TrimSuffix(line[2:], "\\"))})
			cur = &out[len(out)-1]
			cont = strings.HasSuffix(line, "\\")
		case strings.HasPrefix(line, "$ "):
			cur = nil // another program's command (sudo ...): not run
		case cur != nil && line == "" && len(cur.output) == 0:
		case cur != nil:
			cur.output = append(cur.output, line)
		}
	}
	for i := range out {
		for len(out[i].output) > 0 && out[i].output[len(out[i].output)-1] == "" {
			out[i].output = out[i].output[:len(out[i].output)-1]
		}
	}
	return out
}

// shellWords splits a documented command as a POSIX shell would for the
// quoting the docs use ('...', "..."), drops a trailing "# comment", and
// takes a final "> FILE" as standard output's file.
func shellWords(t *testing.T, cmd string) (args []string, stdoutFile string) {
	var words []string
	var w strings.Builder
	inWord := false
	quote := byte(0)
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '#' && !inWord:
			i = len(cmd)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", cmd)
	}
	if inWord {
		words = append(words, w.String())
	}
	if n := len(words); n >= 2 && words[n-2] == ">" {
		stdoutFile, words = words[n-1], words[:n-2]
	}
	return words, stdoutFile
}

// matchShown reports whether got matches the shown lines: equal lines in
// order (trailing blanks aside), "..." matching any run of lines.
func matchShown(shown, got []string) bool {
	if len(shown) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(shown[0]) == "..." {
		for k := 0; k <= len(got); k++ {
			if matchShown(shown[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && strings.TrimRight(got[0], " ") == strings.TrimRight(shown[0], " ") && matchShown(shown[1:], got[1:])
}
