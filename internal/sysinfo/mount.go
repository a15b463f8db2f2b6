// Package sysinfo finds out where a directory lives (file system, mount,
// block device) and what machine this is. It reads /proc and /sys only.
package sysinfo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Mount describes the mount that holds a directory.
type Mount struct {
	// Dir is the absolute, symlink-free path that was asked about.
	Dir        string
	MountPoint string
	FSType     string
	Source     string
	// Major and Minor identify the device of the file system (st_dev).
	Major, Minor uint32
	// Device is the block device's kernel name as /proc/diskstats shows it
	// ("vda1", "nvme0n1p2", "dm-0"), or "" when there is none.
	Device string
	// Disk is the whole disk behind a partition ("vda" for "vda1"), or Device.
	Disk string
	// Rotational is the kernel's view of the disk, when it has one.
	Rotational *bool
}

// Volatile reports whether the file system lives in memory, where
// fdatasync is a no-op and nothing survives a reboot.
func (m Mount) Volatile() bool {
	switch m.FSType {
	case "tmpfs", "ramfs", "devtmpfs", "hugetlbfs":
		return true
	}
	return false
}

// RAMDisk reports whether the file system's block device lives in memory:
// zram (compressed), or brd's ram0, ram1, ... Unlike tmpfs, fdatasync
// does write through the block layer there, but each write is a copy
// (and a compression) the CPUs make, and no storage lies below it.
func (m Mount) RAMDisk() bool {
	if d, ok := strings.CutPrefix(m.Device, "zram"); ok && isDigits(d) {
		return true
	}
	d, ok := strings.CutPrefix(m.Device, "ram")
	return ok && isDigits(d)
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	major, minor uint32
	mountPoint   string
	fsType       string
	source       string
}

// FindMount returns the mount that holds dir, with its block device when it
// has one. dir must exist.
func FindMount(dir string) (Mount, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Mount{}, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Mount{}, err
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return Mount{}, fmt.Errorf("read mount table: %w", err)
	}
	defer f.Close()
	entries, err := parseMountInfo(f)
	if err != nil {
		return Mount{}, fmt.Errorf("read mount table: %w", err)
	}
	best := -1
	for i, e := range entries {
		if !under(real, e.mountPoint) {
			continue
		}
		// The longest mount point wins; among equals the later one, which
		// is mounted over the earlier.
		if best < 0 || len(e.mountPoint) >= len(entries[best].mountPoint) {
			best = i
		}
	}
	if best < 0 {
		return Mount{}, fmt.Errorf("no mount holds %s", real)
	}
	e := entries[best]
	m := Mount{Dir: real, MountPoint: e.mountPoint, FSType: e.fsType, Source: e.source, Major: e.major, Minor: e.minor}
	m.Device, m.Disk = blockDevice(e.major, e.minor)
	if m.Device == "" && strings.HasPrefix(e.source, "/dev/") {
		// btrfs and others report an anonymous st_dev; the source names the device.
		if maj, min, ok := deviceNumber(e.source); ok {
			m.Device, m.Disk = blockDevice(maj, min)
		}
	}
	if m.Disk != "" {
		m.Rotational = rotational(m.Disk)
	}
	return m, nil
}

func under(path, mountPoint string) bool {
	if mountPoint == "/" {
		return true
	}
	return path == mountPoint || strings.HasPrefix(path, mountPoint+"/")
}

func parseMountInfo(r io.Reader) ([]mountEntry, error) {
	var out []mountEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// id parent maj:min root mountpoint opts [optional...] - fstype source superopts
		sep := -1
		for i := 6; i < len(fields); i++ {
			if fields[i] == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 7 || sep < 0 || sep+2 >= len(fields) {
			continue
		}
		maj, min, ok := strings.Cut(fields[2], ":")
		if !ok {
			continue
		}
		ma, err1 := strconv.ParseUint(maj, 10, 32)
		mi, err2 := strconv.ParseUint(min, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, mountEntry{
			major:      uint32(ma),
			minor:      uint32(mi),
			mountPoint: unescapeOctal(fields[4]),
			fsType:     fields[sep+1],
			source:     unescapeOctal(fields[sep+2]),
		})
	}
	return out, sc.Err()
}

// unescapeOctal undoes the kernel's \040-style escaping of spaces, tabs,
// newlines and backslashes in mountinfo.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// blockDevice names the block device major:minor and its whole disk, from
// /sys/dev/block. It returns empty names for anonymous devices.
func blockDevice(major, minor uint32) (device, disk string) {
	link := fmt.Sprintf("/sys/dev/block/%d:%d", major, minor)
	target, err := filepath.EvalSymlinks(link)
	if err != nil {
		return "", ""
	}
	device = filepath.Base(target)
	disk = device
	if _, err := os.Stat(filepath.Join(target, "partition")); err == nil {
		disk = filepath.Base(filepath.Dir(target))
	}
	return device, disk
}

func rotational(disk string) *bool {
	b, err := os.ReadFile(filepath.Join("/sys/block", disk, "queue/rotational"))
	if err != nil {
		return nil
	}
	v := strings.TrimSpace(string(b)) == "1"
	return &v
}
