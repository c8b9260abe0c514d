"""The window's controllers: menus and what their actions do."""
