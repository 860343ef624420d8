"""uartlab.app — the application, in rooms: rig/, record/, run/, procedures/, compare/, cli/, bench/, gui/.

docs/architecture.md says what each room does and what it may import."""
