from acm_compact.app import main

if __name__ == "__main__":
    main()
