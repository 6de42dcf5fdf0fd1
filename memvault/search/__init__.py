"""Search: the text analyzer, ranking, access counts and the derived full-text index (`index/`)."""
