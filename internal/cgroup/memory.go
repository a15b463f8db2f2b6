package cgroup

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrNoMemoryController says that no mounted cgroup hierarchy has the
// memory controller.
var ErrNoMemoryController = errors.New("no cgroup file system with the memory controller is mounted")

var memoryController = controller{v1: "memory", v2: "memory", missing: ErrNoMemoryController}

// v1NoLimit is what cgroup v1's memory.limit_in_bytes holds without a
// limit: the largest page-aligned int64, or near it; anything above
// 2^60 bytes is no limit.
const v1NoLimit = 1 << 60

// MemoryLimit is the memory process pid may use: the least limit of its
// memory cgroup and the groups above it (memory.max in v2,
// memory.limit_in_bytes in v1), 0 when none limits it.
func (s Sys) MemoryLimit(pid int) (int64, error) {
	g, err := s.of(pid, memoryController)
	if err != nil {
		return 0, err
	}
	var least int64
	for {
		l, err := g.memoryLimit()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
		if l > 0 && (least == 0 || l < least) {
			least = l
		}
		if g.Path == "/" || g.Path == g.H.Root {
			return least, nil
		}
		g = g.Parent()
	}
}

// memoryLimit is the group's own limit, 0 when it has none (the root
// group has no such file: os.ErrNotExist).
func (g Group) memoryLimit() (int64, error) {
	name := "memory.limit_in_bytes"
	if g.H.Version == 2 {
		name = "memory.max"
	}
	b, err := os.ReadFile(g.file(name))
	if err != nil {
		return 0, err
	}
	return parseMemoryLimit(string(b))
}

// parseMemoryLimit reads memory.max ("max" or bytes) or
// memory.limit_in_bytes (bytes, a huge value for none).
func parseMemoryLimit(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "max" {
		return 0, nil
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("memory limit %q is not a number of bytes", t)
	}
	if n >= v1NoLimit {
		return 0, nil
	}
	return n, nil
}
