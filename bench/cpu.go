package bench

import (
	"fmt"
	"math"
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
// server: one or more processes by pid (a broker, or a rocketmq-proxy and
// the broker behind it, summed), else process_cpu_seconds_total from
// /metrics.
type cpuMeter struct {
	serverPIDs []int
	self0      float64
	server0    []float64 // per pid; NaN where the first read failed
	selfOK     bool
}

func startCPU(serverPIDs []int) *cpuMeter {
	m := &cpuMeter{serverPIDs: serverPIDs, server0: make([]float64, len(serverPIDs))}
	if v, err := procCPUSeconds(0); err == nil {
		m.self0, m.selfOK = v, true
	}
	for i, pid := range serverPIDs {
		m.server0[i] = math.NaN()
		if v, err := procCPUSeconds(pid); err == nil {
			m.server0[i] = v
		}
	}
	return m
}

// finish returns the bench's CPU stats and, when known, the server's
// (/proc first: the sum over every server pid, each part in Parts when
// there are several; else the metrics scrapes a and b).
func (m *cpuMeter) finish(wall float64, a, b *serverCounters) (CPUStats, *CPUStats) {
	var self CPUStats
	if v, err := procCPUSeconds(0); err == nil && m.selfOK {
		self = cpuStats(v-m.self0, wall, "proc")
	}
	var sum float64
	var parts []ProcCPU
	for i, pid := range m.serverPIDs {
		v, err := procCPUSeconds(pid)
		if err != nil || math.IsNaN(m.server0[i]) {
			parts = nil
			break
		}
		sum += v - m.server0[i]
		parts = append(parts, ProcCPU{PID: pid, CPUStats: cpuStats(v-m.server0[i], wall, "proc")})
	}
	if len(parts) > 0 {
		s := cpuStats(sum, wall, "proc")
		if len(parts) > 1 {
			s.Parts = parts
		}
		return self, &s
	}
	if a != nil && b != nil && a.hasCPU && b.hasCPU {
		s := cpuStats(b.cpu-a.cpu, b.at.Sub(a.at).Seconds(), "metrics")
		return self, &s
	}
	return self, nil
}

// ProcCPU is one process's share of a server's CPU (CPUStats.Parts).
type ProcCPU struct {
	PID int `json:"pid"`
	CPUStats
}
