"""The operator GUI (PySide6 + pyqtgraph): ``uartlab gui``. See main_window.py for the threading rules."""
