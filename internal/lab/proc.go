package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// memberProc is an etcd member running as a child process
// (`etcdperf server`).
type memberProc struct {
	cfg  MemberConfig
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, valid after done
	log  *os.File
}

// startProc starts one member process. The child gets its own process
// group, so that a terminal's Ctrl-C reaches only etcdperf, which then
// stops its members in order; Pdeathsig stops it if etcdperf dies.
func startProc(command []string, cfg MemberConfig) (*memberProc, io.Reader, error) {
	cfg.ExitWithParent = true
	args := append(append([]string{}, command[1:]...), cfg.Args()...)
	cmd := exec.Command(command[0], args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Env = os.Environ()
	logf, err := os.OpenFile(cfg.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("member %s log: %w", cfg.Name, err)
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, nil, fmt.Errorf("start member %s (%s): %w", cfg.Name, command[0], err)
	}
	p := &memberProc{cfg: cfg, cmd: cmd, done: make(chan struct{}), log: logf}
	return p, out, nil
}

// waitReady reads the child's standard output until its ready line.
func (p *memberProc) waitReady(out io.Reader, ready chan<- error) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), ReadyLine) {
			ready <- nil
			// Keep draining so that the child never blocks on a full pipe.
			io.Copy(io.Discard, out)
			break
		}
	}
	err := p.cmd.Wait()
	p.err = err
	close(p.done)
	if err == nil {
		err = errors.New("exited")
	}
	// Harmless when ready was already sent: the channel is buffered.
	select {
	case ready <- fmt.Errorf("member %s %v before it was ready%s", p.cfg.Name, err, logTail(p.cfg.LogFile)):
	default:
	}
}

// stop asks the member to stop (SIGTERM) and kills it after grace. Its
// error is what it could not remove of the volume of a member killed
// outright.
func (p *memberProc) stop(grace time.Duration) error {
	terminate(p.cmd, p.done, grace)
	p.log.Close()
	if p.cfg.VolumeLimit().Any() {
		if err := removeVolumeLeft(p.cfg.DataDir); err != nil {
			return fmt.Errorf("member %s: %w", p.cfg.Name, err)
		}
	}
	return nil
}

// terminate asks a child process to stop (SIGTERM), kills it after grace,
// and returns once it has exited (done is closed by whoever waits for it).
func terminate(cmd *exec.Cmd, done <-chan struct{}, grace time.Duration) {
	select {
	case <-done:
	default:
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(grace):
			_ = cmd.Process.Kill()
			<-done
		}
	}
}

// exited reports whether the member process has ended.
func (p *memberProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// startProcs starts every member and waits until all are ready, at most
// timeout. On failure the started ones are stopped.
func startProcs(ctx context.Context, command []string, cfgs []MemberConfig, timeout time.Duration) ([]*memberProc, error) {
	var procs []*memberProc
	stopAll := func() error {
		var errs []error
		for _, p := range procs {
			errs = append(errs, p.stop(5*time.Second))
		}
		return errors.Join(errs...)
	}
	readies := make([]chan error, len(cfgs))
	for i, cfg := range cfgs {
		p, out, err := startProc(command, cfg)
		if err != nil {
			return nil, errors.Join(err, stopAll())
		}
		procs = append(procs, p)
		readies[i] = make(chan error, 2)
		go p.waitReady(out, readies[i])
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for i, ch := range readies {
		select {
		case err := <-ch:
			if err != nil {
				return nil, errors.Join(err, stopAll())
			}
		case <-t.C:
			return nil, errors.Join(fmt.Errorf("embedded etcd member %s did not become ready within %s%s", cfgs[i].Name, timeout, logTail(cfgs[i].LogFile)), stopAll())
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), stopAll())
		}
	}
	return procs, nil
}
