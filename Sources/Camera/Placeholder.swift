import CV4L2
