package kubernetes

import (
	"context"
	"log/slog"

	"k8s.io/klog/v2"
)

// client-go logs through klog, to stderr by default, and calls a stream
// cut by arena's own close an error. Its lines go to arena's log instead,
// at debug level: what matters reaches the caller as an error.
func init() { klog.SetSlogLogger(slog.New(quiet{})) }

// quiet hands every record to the default logger's handler at debug level.
type quiet struct {
	attrs []slog.Attr
	group string
}

func (q quiet) Enabled(ctx context.Context, _ slog.Level) bool {
	return slog.Default().Handler().Enabled(ctx, slog.LevelDebug)
}

func (q quiet) Handle(ctx context.Context, r slog.Record) error {
	h := slog.Default().Handler()
	if !h.Enabled(ctx, slog.LevelDebug) {
		return nil // what calls Handle may not have asked Enabled
	}
	if q.group != "" {
		h = h.WithGroup(q.group)
	}
	rec := slog.NewRecord(r.Time, slog.LevelDebug, "kubernetes client: "+r.Message, r.PC)
	rec.AddAttrs(q.attrs...)
	r.Attrs(func(a slog.Attr) bool { rec.AddAttrs(a); return true })
	return h.Handle(ctx, rec)
}

func (q quiet) WithAttrs(attrs []slog.Attr) slog.Handler {
	q.attrs = append(append([]slog.Attr(nil), q.attrs...), attrs...)
	return q
}

func (q quiet) WithGroup(name string) slog.Handler {
	if q.group != "" {
		name = q.group + "." + name
	}
	q.group = name
	return q
}
