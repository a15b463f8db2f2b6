package sysinfo

import "golang.org/x/sys/unix"

// deviceNumber returns the major and minor number of a device node.
func deviceNumber(path string) (major, minor uint32, ok bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return 0, 0, false
	}
	return unix.Major(st.Rdev), unix.Minor(st.Rdev), true
}
