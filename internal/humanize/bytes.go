package humanize

import "fmt"

// Bytes formats n as "512 B", "1.5 KiB", "3.0 MiB" and so on up to EiB
// (H1), with one decimal above 1 KiB.
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for q := n / unit; q >= unit; q /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
