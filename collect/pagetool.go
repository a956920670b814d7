package collect

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// PageToolName is the valgrind tool name of mdk's page-set tool.
const PageToolName = "mdkpages"

// pageToolSource is the C source of the page-set tool (collect/tool/mdkpages.c).
//
//go:embed tool/mdkpages.c
var pageToolSource []byte

// pageToolVersion changes whenever the build recipe below changes, so that
// a cached build made by an older recipe is not reused.
const pageToolVersion = "1"

// valgrindPlatform returns valgrind's name of this machine's platform
// ("amd64-linux") and the preprocessor defines a tool is compiled with.
func valgrindPlatform() (string, []string, error) {
	if runtime.GOOS != "linux" {
		return "", nil, fmt.Errorf("mdk's valgrind tool is built on Linux only, not %s", runtime.GOOS)
	}
	arch := map[string]string{"amd64": "amd64", "arm64": "arm64"}[runtime.GOARCH] // 64-bit hosts only
	if arch == "" {
		return "", nil, fmt.Errorf("mdk's valgrind tool is not built for %s", runtime.GOARCH)
	}
	plat := arch + "-linux"
	p := arch + "_linux"
	return plat, []string{"-DVGA_" + arch + "=1", "-DVGO_linux=1", "-DVGP_" + p + "=1", "-DVGPV_" + p + "_vanilla=1"}, nil
}

// valgrindDirs finds, for the valgrind launcher at path (already resolved
// on $PATH), the directory of its tools and preload libraries, the
// directory of the static core libraries a tool links with, and the
// directory of the tool headers.
func valgrindDirs(path, plat string) (libexec, static, include string, err error) {
	prefix := filepath.Dir(filepath.Dir(path))
	if real, err := filepath.EvalSymlinks(path); err == nil {
		prefix = filepath.Dir(filepath.Dir(real))
	}
	has := func(dir, name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	first := func(name string, dirs ...string) string {
		for _, d := range dirs {
			if d != "" && has(d, name) {
				return d
			}
		}
		return ""
	}
	multi, _ := filepath.Glob(filepath.Join(prefix, "lib", "*", "valgrind"))
	libexec = first("vgpreload_core-"+plat+".so", append([]string{os.Getenv("VALGRIND_LIB"),
		filepath.Join(prefix, "libexec", "valgrind"), filepath.Join(prefix, "lib", "valgrind")}, multi...)...)
	if libexec == "" {
		return "", "", "", fmt.Errorf("valgrind's libraries (vgpreload_core-%s.so) not found under %s", plat, prefix)
	}
	static = first("libcoregrind-"+plat+".a", append(append([]string{}, multi...), libexec, filepath.Join(prefix, "lib", "valgrind"))...)
	if static == "" {
		return "", "", "", fmt.Errorf("valgrind's static core library libcoregrind-%s.a not found under %s (Debian's valgrind package has it)", plat, prefix)
	}
	include = first("pub_tool_basics.h", filepath.Join(prefix, "include", "valgrind"))
	if include == "" {
		return "", "", "", fmt.Errorf("valgrind's tool headers (pub_tool_basics.h) not found under %s", filepath.Join(prefix, "include", "valgrind"))
	}
	return libexec, static, include, nil
}

// PageToolCacheDir is where built page tools are kept: $MDK_CACHE_DIR, or
// mdk/ in the user's cache directory ($XDG_CACHE_HOME, ~/.cache).
func PageToolCacheDir() string {
	if d := os.Getenv("MDK_CACHE_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "mdk")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("mdk-cache-%d", os.Getuid()))
}

// BuildPageTool returns the directory of mdk's page-set tool, built for the
// valgrind installed, building it first if no build of it for these inputs
// is cached (see [PageToolArg] for how valgrind is pointed at it). valgrind is the
// launcher (a name on $PATH or a path). The build needs a C compiler ($CC,
// else gcc or cc) and valgrind's static core libraries and tool headers,
// which Debian's valgrind package ships. Builds are kept under
// [PageToolCacheDir], keyed by a hash of everything that goes into them:
// the tool's source, the recipe, the compiler's version and valgrind's
// libraries. A failed build says why, with the compiler's output.
func BuildPageTool(valgrind string) (string, error) {
	if valgrind == "" {
		valgrind = "valgrind"
	}
	path, err := exec.LookPath(valgrind)
	if err != nil {
		return "", fmt.Errorf("%s not found (install the Debian package valgrind): %w", valgrind, err)
	}
	plat, defines, err := valgrindPlatform()
	if err != nil {
		return "", err
	}
	_, static, include, err := valgrindDirs(path, plat)
	if err != nil {
		return "", err
	}
	cc, err := findCC()
	if err != nil {
		return "", err
	}
	ccVersion, err := exec.Command(cc, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("building mdk's valgrind tool: %s --version: %w", cc, err)
	}
	libs := []string{
		filepath.Join(static, "libcoregrind-"+plat+".a"),
		filepath.Join(static, "libvex-"+plat+".a"),
	}
	gccSup := filepath.Join(static, "libgcc-sup-"+plat+".a")
	if _, err := os.Stat(gccSup); err != nil {
		gccSup = ""
	}
	compile := append([]string{"-c", "-O2", "-g", "-std=gnu99", "-fno-strict-aliasing", "-fno-builtin",
		"-fno-stack-protector", "-fomit-frame-pointer", "-fno-pie", "-I" + include}, defines...)
	// Tools are static executables loaded at valgrind's fixed address
	// (valt_load_address in valgrind.pc: 0x58000000 on Linux).
	link := []string{"-static", "-no-pie", "-nodefaultlibs", "-nostartfiles", "-u", "_start",
		"-Wl,--build-id=none", "-Wl,-Ttext-segment=0x58000000"}

	h := sha256.New()
	fmt.Fprintf(h, "mdkpages %s\n%s\n%s\n%s\n%s\n%s\n", pageToolVersion, plat, cc, ccVersion,
		strings.Join(compile, " "), strings.Join(link, " "))
	h.Write(pageToolSource)
	for _, lib := range append(libs, gccSup) {
		if lib == "" {
			continue
		}
		if err := hashFile(h, lib); err != nil {
			return "", err
		}
	}
	key := hex.EncodeToString(h.Sum(nil))[:20]
	cache, err := filepath.Abs(filepath.Join(PageToolCacheDir(), "valgrind-tool"))
	if err != nil {
		return "", err
	}
	final := filepath.Join(cache, key)
	toolFile := PageToolName + "-" + plat
	if _, err := os.Stat(filepath.Join(final, toolFile)); err == nil {
		return final, nil
	}

	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("page tool cache: %w", err)
	}
	tmp, err := os.MkdirTemp(cache, key+".tmp")
	if err != nil {
		return "", fmt.Errorf("page tool cache: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	src := filepath.Join(tmp, "mdkpages.c")
	obj := filepath.Join(tmp, "mdkpages.o")
	if err := os.WriteFile(src, pageToolSource, 0o644); err != nil {
		return "", err
	}
	run := func(args ...string) error {
		out, err := exec.Command(cc, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("building mdk's valgrind tool: %s %s: %v\n%s", cc, strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
		return nil
	}
	if err := run(append(compile, "-o", obj, src)...); err != nil {
		return "", err
	}
	args := append(append(link, "-o", filepath.Join(tmp, toolFile), obj), libs...)
	args = append(args, "-lgcc")
	if gccSup != "" {
		args = append(args, gccSup)
	}
	if err := run(args...); err != nil {
		return "", err
	}
	os.Remove(src)
	os.Remove(obj)
	if err := os.Rename(tmp, final); err != nil {
		// Another mdk built it at the same time: use that one.
		if _, serr := os.Stat(filepath.Join(final, toolFile)); serr == nil {
			return final, nil
		}
		return "", fmt.Errorf("page tool cache: %w", err)
	}
	return final, nil
}

func findCC() (string, error) {
	names := []string{"gcc", "cc"}
	if cc := os.Getenv("CC"); cc != "" {
		names = []string{cc}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no C compiler to build mdk's valgrind tool (install the Debian package gcc, or set $CC)")
}

func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(h, "%s\n", path)
	_, err = io.Copy(h, f)
	return err
}

// PageToolArg returns valgrind's --tool option that runs the tool built in
// dir. valgrind's launcher runs $VALGRIND_LIB/NAME-PLATFORM; a NAME that
// climbs to the root with ".." reaches dir from any library directory, while
// valgrind's own library directory (the preloads and their paths in the
// program's LD_PRELOAD) stays the one it was installed with. Setting
// VALGRIND_LIB instead would change the program's environment, and with it
// its stack layout and instruction count, making the trace differ from
// lackey's.
func PageToolArg(dir string) string {
	return "--tool=" + strings.Repeat("../", 64) + strings.TrimPrefix(filepath.Join(dir, PageToolName), "/")
}
