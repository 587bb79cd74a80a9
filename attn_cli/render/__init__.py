"""Renderers: Rich tables for people, JSON for programs; both draw from one report document."""
