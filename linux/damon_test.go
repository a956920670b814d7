package linux

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeDamon lays out the read side of DAMON's sysfs admin directory under
// a temporary sys root: one kdamond per state ("on", "off", "off+ctx").
func fakeDamon(t *testing.T, states ...string) FS {
	t.Helper()
	sys := t.TempDir()
	dir := filepath.Join(sys, "kernel/mm/damon/admin/kdamonds")
	write := func(p, v string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "nr_kdamonds"), strconv.Itoa(len(states)))
	for i, st := range states {
		kd := filepath.Join(dir, strconv.Itoa(i))
		on, ctx := strings.HasPrefix(st, "on"), st == "on" || strings.HasSuffix(st, "+ctx")
		state, pid, nctx := "off", "-1", "0"
		if on {
			state, pid = "on", strconv.Itoa(100+i)
		}
		if ctx {
			nctx = "1"
		}
		write(filepath.Join(kd, "state"), state)
		write(filepath.Join(kd, "pid"), pid)
		write(filepath.Join(kd, "contexts/nr_contexts"), nctx)
	}
	return NewFS(t.TempDir(), sys)
}

func TestChooseKdamond(t *testing.T) {
	for _, tc := range []struct {
		states []string
		index  int
		create bool
		err    string
	}{
		{states: nil, index: 0, create: true},
		{states: []string{"off"}, index: 0},
		{states: []string{"on", "off"}, index: 1},
		{states: []string{"on"}, err: "every kdamond is busy (kdamond 0 runs as pid 100)"},
		{states: []string{"on", "off+ctx"}, err: "every kdamond is busy (kdamond 0 runs as pid 100; kdamond 1 is off but configured (1 contexts))"},
	} {
		fsys := fakeDamon(t, tc.states...)
		index, create, err := ChooseKdamond(fsys)
		if tc.err != "" {
			if !errors.Is(err, ErrNoDamon) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err %v, want %q", tc.states, err, tc.err)
			}
			continue
		}
		if err != nil || index != tc.index || create != tc.create {
			t.Errorf("%v: %d, %v, %v; want %d, %v", tc.states, index, create, err, tc.index, tc.create)
		}
	}
}

// TestDamonMissing: a kernel without DAMON's sysfs interface gets the
// one-line error.
func TestDamonMissing(t *testing.T) {
	fsys := NewFS(t.TempDir(), t.TempDir())
	_, _, err := ChooseKdamond(fsys)
	if !errors.Is(err, ErrNoDamon) || !strings.Contains(err.Error(), "kernel built without CONFIG_DAMON_SYSFS") {
		t.Fatalf("err %v", err)
	}
}

// TestDamonRefusesBusyHost checks the refusal against this machine's real
// DAMON sysfs, reading only: where every kdamond is busy (the platform runs
// one), ChooseKdamond refuses, and nothing changed. It never writes: where
// a kdamond is free the test only says so.
func TestDamonRefusesBusyHost(t *testing.T) {
	fsys := NewFS("/proc", "/sys")
	before, err := fsys.Kdamonds()
	if err != nil {
		t.Skipf("no DAMON sysfs here: %v", err)
	}
	_, _, err = ChooseKdamond(fsys)
	after, _ := fsys.Kdamonds()
	if len(after) != len(before) {
		t.Fatalf("kdamonds changed: %v -> %v", before, after)
	}
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("kdamond changed: %v -> %v", before[i], after[i])
		}
	}
	busy := len(before) > 0
	for _, k := range before {
		busy = busy && (k.State == "on" || k.Contexts > 0)
	}
	if !busy {
		t.Skipf("a kdamond is free here (%v): the refusal is tested in the guests", before)
	}
	if !errors.Is(err, ErrNoDamon) || !strings.Contains(err.Error(), "every kdamond is busy") {
		t.Fatalf("every kdamond is busy (%v) but ChooseKdamond said %v", before, err)
	}
	t.Logf("refused, as it must: %v", err)
}
