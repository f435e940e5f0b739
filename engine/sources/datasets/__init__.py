"""Dataset readers, one module per format. Each checks its input and reports bad lines as file:line."""
