package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// IsMounted reports whether dir is a mount point of this mount namespace.
func IsMounted(dir string) bool {
	_, ok := mountType(dir)
	return ok
}

func mountType(dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[4] != abs {
			continue
		}
		for i := 6; i < len(f)-1; i++ {
			if f[i] == "-" {
				return f[i+1], true
			}
		}
	}
	return "", false
}

// WaitMounted waits until dir is mounted with the given file system type.
func WaitMounted(dir, fsType string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if t, ok := mountType(dir); ok && t == fsType {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s not mounted as %s after %v", dir, fsType, timeout)
}
