"""codeground's own Haystack components. Each file holds one idea; YAML names them by import path."""
