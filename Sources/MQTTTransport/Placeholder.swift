import CMosquitto
