package vmtest

import (
	"fmt"
	"os/exec"
	"path"
	"slices"
	"strings"
)

// Program returns what ships the host's dynamically linked program (an
// absolute path, e.g. /usr/bin/memcached) into a guest: Files entries for
// the program, at the same path, and for every shared library and the
// loader ldd(1) names, each at the path ldd prints (the file it resolves
// to is copied, not the link); and the LD_LIBRARY_PATH that finds them
// (the guest has no ld.so.cache). Run it in the guest as
// `LD_LIBRARY_PATH=LIBPATH /usr/bin/memcached ...`.
func Program(prog string) (files map[string]string, libPath string, err error) {
	if !path.IsAbs(prog) {
		return nil, "", fmt.Errorf("vmtest: program %s: want an absolute path", prog)
	}
	out, err := exec.Command("ldd", prog).CombinedOutput()
	if err != nil {
		return nil, "", fmt.Errorf("vmtest: ldd %s: %v: %s", prog, err, strings.TrimSpace(string(out)))
	}
	files = map[string]string{prog: prog}
	var dirs []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		var lib string
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			lib = f[2] // libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			lib = f[0] // /lib64/ld-linux-x86-64.so.2 (0x...)
		case len(f) >= 3 && f[1] == "=>" && f[2] == "not":
			return nil, "", fmt.Errorf("vmtest: %s: %s is not found", prog, f[0])
		default:
			continue // linux-vdso.so.1, statically linked
		}
		files[lib] = lib
		if d := path.Dir(lib); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return files, strings.Join(dirs, ":"), nil
}
