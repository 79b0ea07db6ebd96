DELETE FROM devices;
