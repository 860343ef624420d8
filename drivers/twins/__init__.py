"""Simulated twins of every rig device, speaking the devices' real protocols, driven by one physics plant."""
