package main

import "github.com/sievekv/sievekv/kv"

// cmdExplainScan is `explain scan START END`: which tables a scan of
// [START, END) would seek into and which their range filters rule out.
func (in *Interp) cmdExplainScan(args []token) error {
	if len(args) != 2 {
		return &usageError{"explain scan takes START and END", lookup("explain").usage}
	}
	start, end, err := rangePair(args)
	if err != nil {
		return err
	}
	ex, err := in.db.ExplainScan(start, end)
	if err != nil {
		return err
	}
	if in.json {
		return in.emitJSON(explainScanJSON(ex))
	}
	in.printf("scan [%s, %s):\n%s", formatBytes(start), formatBytes(end), ex.String())
	return nil
}

type explainScanTable struct {
	Level          int     `json:"level"`
	Table          uint64  `json:"table"`
	HasRangeFilter bool    `json:"has_range_filter"`
	RuledOut       bool    `json:"ruled_out"`
	CodeWidth      uint64  `json:"code_width"`
	FPBound        float64 `json:"fp_bound"`
	Error          string  `json:"error,omitempty"`
}

type explainScanRecord struct {
	Cmd       string             `json:"cmd"`
	Start     jsonBytes          `json:"start"`
	End       jsonBytes          `json:"end"`
	Memtables int                `json:"memtables"`
	Tables    []explainScanTable `json:"tables"`
	RuledOut  int                `json:"ruled_out"`
}

func explainScanJSON(ex *kv.ScanExplanation) explainScanRecord {
	r := explainScanRecord{Cmd: "explain scan", Start: jsonBytes(ex.Lower), End: jsonBytes(ex.Upper),
		Memtables: ex.Memtables, Tables: []explainScanTable{}}
	for _, s := range ex.Tables {
		t := explainScanTable{Level: s.Level, Table: s.Table, HasRangeFilter: s.HasRangeFilter,
			RuledOut: s.RuledOut, CodeWidth: s.CodeWidth, FPBound: s.FPBound}
		if s.Err != nil {
			t.Error = s.Err.Error()
		}
		if s.RuledOut {
			r.RuledOut++
		}
		r.Tables = append(r.Tables, t)
	}
	return r
}
