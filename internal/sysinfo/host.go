package sysinfo

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/internal/result"
)

// HostEnv returns the facts about this machine that every Result carries.
func HostEnv() *result.Env {
	env := &result.Env{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		CPUs:      runtime.NumCPU(),
		GoVersion: runtime.Version(),
	}
	env.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		env.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	env.MemBytes = HostMemory()
	return env
}

// HostMemory is this host's memory in bytes (0 when the kernel does not
// say).
func HostMemory() uint64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// DirEnv returns HostEnv completed with where dir lives. A directory whose
// mount cannot be found still gets the host facts.
func DirEnv(dir string) *result.Env {
	env := HostEnv()
	env.Dir = dir
	if m, err := FindMount(dir); err == nil {
		FillMount(env, m)
	}
	return env
}

// FillMount copies a Mount's facts into env.
func FillMount(env *result.Env, m Mount) {
	env.Dir = m.Dir
	env.FSType = m.FSType
	env.MountPoint = m.MountPoint
	env.MountSource = m.Source
	env.Device = m.Device
	env.Rotational = m.Rotational
	env.Volatile = m.Volatile()
}
