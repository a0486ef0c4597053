package bench

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/prometheus/procfs"
)

// Machine describes where a run happened.
type Machine struct {
	CPUs       int    `json:"cpus"` // runtime.NumCPU
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPUModel   string `json:"cpu_model,omitempty"`
	GoVersion  string `json:"go_version"`
	// LoadAvg1 is the 1-minute load average when the report was made: on
	// a shared machine, anything well above CPUs means the numbers include
	// other processes' contention.
	LoadAvg1 float64 `json:"loadavg1"`
}

func machineInfo() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
	if fs, err := procfs.NewDefaultFS(); err == nil {
		if infos, err := fs.CPUInfo(); err == nil && len(infos) > 0 {
			m.CPUModel = strings.TrimSpace(infos[0].ModelName)
		}
		if la, err := fs.LoadAvg(); err == nil {
			m.LoadAvg1 = la.Load1
		}
	}
	return m
}

// procCPUSeconds returns the user+system CPU seconds of pid (0: this
// process) from /proc/<pid>/stat. Errors: the process or procfs is missing.
func procCPUSeconds(pid int) (float64, error) {
	var p procfs.Proc
	var err error
	if pid == 0 {
		p, err = procfs.Self()
	} else {
		p, err = procfs.NewProc(pid)
	}
	if err != nil {
		return 0, fmt.Errorf("bench: /proc/%d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return 0, fmt.Errorf("bench: /proc/%d/stat: %w", pid, err)
	}
	return st.CPUTime(), nil
}

// cpuStats turns a CPU-seconds difference over wall seconds into CPUStats.
func cpuStats(cpuSeconds, wallSeconds float64, source string) CPUStats {
	s := CPUStats{Seconds: cpuSeconds, Source: source}
	if wallSeconds > 0 {
		s.Percent = 100 * cpuSeconds / wallSeconds
		s.MachinePercent = s.Percent / float64(runtime.NumCPU())
	}
	return s
}

// cpuMeter measures the CPU time of this process and, optionally, of the
// server (by pid, else by process_cpu_seconds_total from /metrics).
type cpuMeter struct {
	serverPID        int
	self0, server0   float64
	selfOK, serverOK bool
}

func startCPU(serverPID int) *cpuMeter {
	m := &cpuMeter{serverPID: serverPID}
	if v, err := procCPUSeconds(0); err == nil {
		m.self0, m.selfOK = v, true
	}
	if serverPID > 0 {
		if v, err := procCPUSeconds(serverPID); err == nil {
			m.server0, m.serverOK = v, true
		}
	}
	return m
}

// finish returns the bench's CPU stats and, when known, the server's:
// /proc first, else the metrics scrapes a and b.
func (m *cpuMeter) finish(wall float64, a, b *serverCounters) (CPUStats, *CPUStats) {
	var self CPUStats
	if v, err := procCPUSeconds(0); err == nil && m.selfOK {
		self = cpuStats(v-m.self0, wall, "proc")
	}
	if m.serverOK {
		if v, err := procCPUSeconds(m.serverPID); err == nil {
			s := cpuStats(v-m.server0, wall, "proc")
			return self, &s
		}
	}
	if a != nil && b != nil && a.hasCPU && b.hasCPU {
		s := cpuStats(b.cpu-a.cpu, b.at.Sub(a.at).Seconds(), "metrics")
		return self, &s
	}
	return self, nil
}
