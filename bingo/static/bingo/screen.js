// screen script
