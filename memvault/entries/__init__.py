"""The file format: Markdown to memory events and back (parse, render), the event model, the
timeline's supersession rules, confidence decay, live spans and the time expressions people type."""
